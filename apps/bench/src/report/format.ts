import type { ResultRow } from '../results';

/** A number with three significant digits (fixed notation), '-' for null. */
export function sig3(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '-';
  if (x === 0) return '0';
  // toPrecision rounds once (0.99996 -> '1.00'); past 100 it would switch to exponents.
  return Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3);
}

/** A share as a percentage ('45%', '0.12%'), '-' for null. */
export function percent(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '-';
  const p = x * 100;
  if (p === 0) return '0%';
  if (p < 0.1) return '<0.1%';
  return `${p >= 10 ? p.toFixed(0) : sig3(p)}%`;
}

/** A count, short: 65536 -> '65.5k', 127506841 -> '128M'. */
export function count(n: number): string {
  if (n < 10_000) return String(n);
  for (const [unit, size] of [
    ['G', 1e9],
    ['M', 1e6],
    ['k', 1e3],
  ] as const) {
    if (n >= size) return `${sig3(n / size)}${unit}`;
  }
  return String(n);
}

/** The load column: '0.75', or '0.25-0.30' for a bin. */
export function loadText(row: Pick<ResultRow, 'load' | 'loadTo'>): string {
  return row.loadTo !== undefined ? `${row.load.toFixed(2)}-${row.loadTo.toFixed(2)}` : row.load.toFixed(2);
}

/** Column alignment: numbers right, text left. */
export type Align = 'l' | 'r';

/** A plain-text table with aligned columns and a rule under the header. */
export function textTable(headers: readonly string[], rows: readonly string[][], align: readonly Align[]): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (align[c] === 'r' ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The cells of a result row, in the order of RESULT_HEADERS. */
export function resultCells(row: ResultRow): string[] {
  return [
    row.table,
    row.workload,
    loadText(row),
    row.operation,
    count(row.ops),
    sig3(row.gpuMs?.median),
    percent(row.gpuMs?.spread),
    sig3(row.gops),
    percent(row.shareOfGather),
    sig3(row.e2eMs?.median),
    row.ok ? 'ok' : 'FAIL',
  ];
}

export const RESULT_HEADERS = ['table', 'workload', 'load', 'op', 'ops', 'GPU ms', 'spread', 'G ops/s', 'of gather', 'e2e ms', 'ok'];
export const RESULT_ALIGN: Align[] = ['l', 'l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'];
