import type { BenchReport, ResultRow, SkippedRow } from '../results';

/** A number with three significant digits (fixed notation), '-' for null. */
export function sig3(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '-';
  if (x === 0) return '0';
  // toPrecision rounds once (0.99996 -> '1.00'); past 100 it would switch to exponents.
  return Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3);
}

/** A unit for operation rates: a prefix and how many operations per second one of it is. */
export interface RateUnit {
  prefix: 'G' | 'M' | 'k' | '';
  perSecond: number;
}

const RATE_UNITS: readonly RateUnit[] = [
  { prefix: 'G', perSecond: 1e9 },
  { prefix: 'M', perSecond: 1e6 },
  { prefix: 'k', perSecond: 1e3 },
  { prefix: '', perSecond: 1 },
];

/**
 * The unit a set of rates (operations per second) reads best in: the largest in which the fastest
 * is at least 1. A GPU's hash-table rates read in G ops/s; SwiftShader's on a CPU in M ops/s
 * (1.2 rather than 0.0012 G ops/s).
 */
export function rateUnit(perSecond: readonly (number | null | undefined)[]): RateUnit {
  const finite = perSecond.filter((x): x is number => typeof x === 'number' && Number.isFinite(x) && x > 0);
  const top = finite.length === 0 ? 1e9 : Math.max(...finite);
  return RATE_UNITS.find((u) => top >= u.perSecond) ?? (RATE_UNITS[RATE_UNITS.length - 1] as RateUnit);
}

/** A rate in a unit, three significant digits ('-' for null). */
export function rateIn(perSecond: number | null | undefined, unit: RateUnit): string {
  return perSecond === null || perSecond === undefined ? '-' : sig3(perSecond / unit.perSecond);
}

/** The unit of a report's operation rates: chosen by its results' throughputs (G ops/s on a GPU). */
export function reportRateUnit(report: Pick<BenchReport, 'results'>): RateUnit {
  return rateUnit(report.results.map((r) => (r.gops === null ? null : r.gops * 1e9)));
}

/** Printed under the figures of a software adapter: they measure the CPU that emulates the GPU. */
export const SOFTWARE_NOTE =
  'Software adapter (SwiftShader on the CPU): these figures check that everything runs and is right; they say nothing about GPU speed.';

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

/** A skipped row as text: 'hive mixed-hive: ...', 'hive at load 0.95: ...', 'load 0.75: ...' ('*': every table or workload). */
export function skipText(s: SkippedRow): string {
  const what = [s.table, s.workload].filter((x) => x !== '*');
  if (s.load !== undefined) what.push(what.length === 0 ? `load ${s.load}` : `at load ${s.load}`);
  return `${what.join(' ')}: ${s.note}`;
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

/** The cells of a result row, in the order of resultHeaders(unit). */
export function resultCells(row: ResultRow, unit: RateUnit = RATE_UNITS[0] as RateUnit): string[] {
  return [
    row.table,
    row.workload,
    loadText(row),
    row.operation,
    count(row.ops),
    sig3(row.gpuMs?.median),
    percent(row.gpuMs?.spread),
    rateIn(row.gops === null ? null : row.gops * 1e9, unit),
    percent(row.shareOfGather),
    sig3(row.e2eMs?.median),
    percent(row.e2eShareOfFloor),
    row.ok ? 'ok' : 'FAIL',
  ];
}

/** Headers of the result table, throughput in `unit`. */
export function resultHeaders(unit: RateUnit = RATE_UNITS[0] as RateUnit): string[] {
  return [
    'table',
    'workload',
    'load',
    'op',
    'ops',
    'GPU ms',
    'spread',
    `${unit.prefix} ops/s`.trimStart(),
    'of gather',
    'e2e ms',
    'e2e of link',
    'ok',
  ];
}
export const RESULT_ALIGN: Align[] = ['l', 'l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'];
