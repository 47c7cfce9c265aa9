/**
 * apps/bench's result files (the `BenchReport` of apps/bench/src/results.ts, schema version 1),
 * read tolerantly: the schema may gain fields, and a page that cannot read one file still shows
 * the others (and says which file it skipped and why).
 */

export interface BenchRow {
  table: string;
  workload: string;
  operation: string;
  /** Load factor the operation ran at (incremental: the start of its bin), or null if none. */
  load: number | null;
  /** Incremental bins only: the end of the load bin. */
  loadTo: number | null;
  /** Billions of operations per second. */
  gops: number;
  /** gops as a share of the device's random-gather rate (the memory roofline), if measured. */
  shareOfGather: number | null;
  ok: boolean;
}

export interface BenchRun {
  file: string;
  date: string;
  /** The commit measured (`git.revision`), with `-dirty` when the tree had local changes. */
  git: string;
  /** The adapter's driver (on Dawn, the driver's name and version), or '' if not recorded. */
  driver: string;
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

/** Billions of random 4-byte gathers per second: `roofline.gather4.opsPerSecond` in schema 1. */
function roofline(value: unknown): number | null {
  if (isObject(value)) {
    const perSecond = isObject(value.gather4) ? num(value.gather4.opsPerSecond) : null;
    if (perSecond !== null) return perSecond / 1e9;
    return num(value.gops) ?? num(value.randomGatherGops) ?? num(value.gatherGops);
  }
  return num(value);
}

function revision(value: unknown): string {
  if (!isObject(value)) return str(value);
  const rev = str(value.revision) || str(value.commit) || str(value.sha) || str(value.describe);
  return value.dirty === true && !rev.endsWith('-dirty') ? `${rev}-dirty` : rev;
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
    loadTo: num(value.loadTo),
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
  return {
    file,
    date: str(json.date),
    git: revision(json.git),
    driver: isObject(json.device) ? str(json.device.driver) : '',
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

/** What the run selector lists of a run: enough to pick it, not its numbers. */
export interface RunSummary {
  file: string;
  date: string;
  git: string;
  driver: string;
  suite: string;
  rows: number;
}

/** One device's runs: the newest in full (shown by default), every run (newest first) as a summary. */
export interface DeviceRuns {
  device: string;
  latest: BenchRun;
  runs: RunSummary[];
}

/** What the benchmarks page ships in its HTML: the newest run per device; older runs are fetched on demand. */
export interface BenchPage {
  devices: DeviceRuns[];
  skipped: BenchData['skipped'];
  /** Runs in all, on every device. */
  total: number;
}

export function summarize(run: BenchRun): RunSummary {
  return { file: run.file, date: run.date, git: run.git, driver: run.driver, suite: run.suite, rows: run.rows.length };
}

/** Groups runs (newest first, as collectRuns orders them) by device description, devices in order of their newest run. */
export function byDevice(data: BenchData): BenchPage {
  const devices = new Map<string, DeviceRuns>();
  for (const run of data.runs) {
    const entry = devices.get(run.device.description);
    if (entry) entry.runs.push(summarize(run));
    else devices.set(run.device.description, { device: run.device.description, latest: run, runs: [summarize(run)] });
  }
  return { devices: [...devices.values()], skipped: data.skipped, total: data.runs.length };
}

/**
 * Where a run's JSON lives in the built site (below the base): the page fetches it when the run is
 * selected. File names are the results directory's, so they are unique.
 */
export function runAssetPath(file: string): string {
  return `/bench/runs/${file.replace(/[^\w.-]/g, '_')}`;
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
