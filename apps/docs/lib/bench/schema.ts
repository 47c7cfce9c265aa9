/**
 * apps/bench's result files, read tolerantly: the schema may gain fields, and a page that cannot
 * read one file still shows the others (and says which file it skipped and why).
 */

export interface BenchRow {
  table: string;
  workload: string;
  operation: string;
  /** Target load factor, or null for workloads without one (mixed, ingestion). */
  load: number | null;
  /** Billions of operations per second. */
  gops: number;
  /** gops as a share of the device's random-gather rate (the memory roofline), if measured. */
  shareOfGather: number | null;
  ok: boolean;
}

export interface BenchRun {
  file: string;
  date: string;
  git: string;
  suite: string;
  capacity: number | null;
  /** The device's description first, then its other recorded properties (driver, backend...). */
  device: { description: string; details: [string, string][] };
  /** Random 4-byte gathers per second (billions): the roofline every result is compared with. */
  rooflineGops: number | null;
  rows: BenchRow[];
}

export interface BenchData {
  runs: BenchRun[];
  /** Files that could not be read, with the reason. */
  skipped: { file: string; reason: string }[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : fallback);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function device(value: unknown): BenchRun['device'] {
  if (typeof value === 'string') return { description: value, details: [] };
  if (!isObject(value)) return { description: 'unknown device', details: [] };
  const details: [string, string][] = [];
  for (const [k, v] of Object.entries(value)) {
    if (k === 'description') continue;
    if (typeof v === 'string' && v !== '') details.push([k, v]);
    else if (typeof v === 'number' || typeof v === 'boolean') details.push([k, String(v)]);
  }
  return { description: str(value.description, 'unknown device'), details };
}

function roofline(value: unknown): number | null {
  if (isObject(value)) return num(value.gops) ?? num(value.randomGatherGops) ?? num(value.gatherGops);
  return num(value);
}

function row(value: unknown): BenchRow | null {
  if (!isObject(value)) return null;
  const gops = num(value.gops);
  if (gops === null) return null;
  const operation = str(value.operation) || str(value.workload, 'unknown');
  return {
    table: str(value.table, 'unknown'),
    workload: str(value.workload, operation),
    operation,
    load: num(value.load),
    gops,
    shareOfGather: num(value.shareOfGather),
    ok: value.ok !== false,
  };
}

/** One results file, or the reason it cannot be shown. */
export function normalizeRun(file: string, json: unknown): BenchRun | { file: string; reason: string } {
  if (!isObject(json)) return { file, reason: 'not a JSON object' };
  if (!Array.isArray(json.results)) return { file, reason: 'no results array' };
  const rows = json.results.map(row).filter((r): r is BenchRow => r !== null);
  const git = isObject(json.git) ? str(json.git.commit) || str(json.git.sha) || str(json.git.describe) : str(json.git);
  return {
    file,
    date: str(json.date),
    git,
    suite: str(json.suite),
    capacity: num(json.capacity),
    device: device(json.device),
    rooflineGops: roofline(json.roofline),
    rows,
  };
}

/** All files, newest run first. */
export function collectRuns(files: { file: string; json?: unknown; error?: string }[]): BenchData {
  const runs: BenchRun[] = [];
  const skipped: BenchData['skipped'] = [];
  for (const { file, json, error } of files) {
    if (error !== undefined) {
      skipped.push({ file, reason: error });
      continue;
    }
    const r = normalizeRun(file, json);
    if ('reason' in r) skipped.push(r);
    else runs.push(r);
  }
  runs.sort((a, b) => b.date.localeCompare(a.date) || a.file.localeCompare(b.file));
  return { runs, skipped };
}

export interface Series {
  label: string;
  points: { load: number; gops: number }[];
}

/** Throughput against load, one chart per operation and one line per table (and workload). */
export function chartsByOperation(rows: BenchRow[]): { operation: string; series: Series[] }[] {
  const byOperation = new Map<string, BenchRow[]>();
  for (const r of rows) {
    if (r.load === null || !r.ok) continue;
    const list = byOperation.get(r.operation) ?? [];
    list.push(r);
    byOperation.set(r.operation, list);
  }
  return [...byOperation].map(([operation, list]) => {
    const workloads = new Set(list.map((r) => r.workload));
    const series = new Map<string, Series>();
    for (const r of list) {
      const label = workloads.size > 1 ? `${r.table} · ${r.workload}` : r.table;
      const s = series.get(label) ?? { label, points: [] };
      s.points.push({ load: r.load as number, gops: r.gops });
      series.set(label, s);
    }
    for (const s of series.values()) s.points.sort((a, b) => a.load - b.load);
    return { operation, series: [...series.values()] };
  });
}
