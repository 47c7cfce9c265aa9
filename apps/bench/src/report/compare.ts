import type { BenchReport, ResultRow } from '../results';
import { type Align, loadText, sig3, textTable } from './format';

/** One matched result: throughput before and after, and their ratio (new / old). */
export interface ComparedRow {
  table: string;
  workload: string;
  load: string;
  operation: string;
  oldGops: number | null;
  newGops: number | null;
  ratio: number | null;
}

export interface Comparison {
  rows: ComparedRow[];
  /** Rates in the roofline's unit: G reads/s, G lines/s, GB/s. */
  rooflines: Array<{ name: string; unit: string; old: number; new: number; ratio: number | null }>;
  /** Differences that make ratios less meaningful (device, capacity), and unmatched rows. */
  notes: string[];
}

function key(r: ResultRow): string {
  return `${r.table}|${r.workload}|${r.operation}|${loadText(r)}`;
}

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && a > 0 ? b / a : null;
}

/** Matches the results of two runs by table, workload, operation and load. */
export function compareReports(old: BenchReport, current: BenchReport): Comparison {
  const notes: string[] = [];
  if (old.device.description !== current.device.description)
    notes.push(`devices differ: ${old.device.description} -> ${current.device.description}`);
  if (old.capacity !== current.capacity) notes.push(`capacities differ: ${old.capacity} -> ${current.capacity} slots`);
  if (old.keys.distribution !== current.keys.distribution) notes.push('key distributions differ');
  const before = new Map(old.results.filter((r) => r.ok).map((r) => [key(r), r]));
  const rows: ComparedRow[] = [];
  let unmatched = 0;
  for (const r of current.results) {
    const o = before.get(key(r));
    if (!o) {
      unmatched++;
      continue;
    }
    rows.push({
      table: r.table,
      workload: r.workload,
      load: loadText(r),
      operation: r.operation,
      oldGops: o.gops,
      newGops: r.ok ? r.gops : null,
      ratio: r.ok ? ratio(o.gops, r.gops) : null,
    });
  }
  if (unmatched > 0) notes.push(`${unmatched} results have no match in the old run`);
  const rate = (r: BenchReport, k: 'gather4' | 'gather128' | 'copy') =>
    k === 'copy' ? r.roofline.copy.gbPerSecond : r.roofline[k].opsPerSecond / 1e9;
  const rooflines = (
    [
      ['gather4', 'G reads/s'],
      ['gather128', 'G lines/s'],
      ['copy', 'GB/s'],
    ] as const
  ).map(([name, unit]) => ({
    name,
    unit,
    old: rate(old, name),
    new: rate(current, name),
    ratio: ratio(rate(old, name), rate(current, name)),
  }));
  return { rows, rooflines, notes };
}

function ratioText(r: number | null): string {
  return r === null ? '-' : `${sig3(r)}x`;
}

/** The comparison as text: rooflines, then every matched result, then notes. */
export function formatComparison(c: Comparison, oldName: string): string {
  const align: Align[] = ['l', 'l', 'r', 'l', 'r', 'r', 'r'];
  const out = [`compared with ${oldName} (ratio = new / old throughput):`, ''];
  out.push(
    textTable(
      ['roofline', 'unit', 'old', 'new', 'ratio'],
      c.rooflines.map((r) => [r.name, r.unit, sig3(r.old), sig3(r.new), ratioText(r.ratio)]),
      ['l', 'l', 'r', 'r', 'r'],
    ),
    '',
  );
  out.push(
    textTable(
      ['table', 'workload', 'load', 'op', 'old G ops/s', 'new G ops/s', 'ratio'],
      c.rows.map((r) => [r.table, r.workload, r.load, r.operation, sig3(r.oldGops), sig3(r.newGops), ratioText(r.ratio)]),
      align,
    ),
  );
  if (c.notes.length > 0) out.push('', ...c.notes.map((n) => `note: ${n}`));
  return out.join('\n');
}
