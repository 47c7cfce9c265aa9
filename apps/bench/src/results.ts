import type { Roofline } from './roofline';
import type { Stats } from './stats';

/** Version of the results JSON; bump it when a field changes meaning or goes away. */
export const SCHEMA_VERSION = 1;

/** One measured operation of one workload on one table at one load factor. */
export interface ResultRow {
  table: string;
  workload: string;
  /** Load factor the operation ran at (build: the load reached; incremental: start of the bin). */
  load: number;
  /** Incremental bins only: end of the load bin the batches started in. */
  loadTo?: number;
  /** The timed operation: insert, find, erase, mixed. */
  operation: string;
  /** Operations per timed pass (summed over the bin's batches for incremental). */
  ops: number;
  /** GPU time from timestamp queries, over the repetitions; null when the run failed before timing. */
  gpuMs: Stats | null;
  /** Billions of operations per second at the median GPU time. */
  gops: number | null;
  /** gops as a share of the device's random 4-byte gather rate (the roofline of a hash-table probe). */
  shareOfGather: number | null;
  /** Wall-clock time of the same operation through the table's host API: upload, run, download. */
  e2eMs?: Stats;
  /** Bytes the end-to-end run moves each way between host arrays and the GPU (its inputs and answers). */
  e2eBytes?: { up: number; down: number };
  /** Billions of operations per second end to end (median wall-clock time). */
  e2eGops?: number;
  /** The host link's floor for e2eBytes (roofline.hostLink) over the end-to-end time: 1 is the link's rate. */
  e2eShareOfFloor?: number;
  /** False when an answer was wrong or the run failed: the CLI then exits non-zero. */
  ok: boolean;
  note?: string;
}

/** A workload (or a load of it) that a table does not support. */
export interface SkippedRow {
  table: string;
  workload: string;
  load?: number;
  note: string;
}

export interface DeviceRecord {
  description: string;
  vendor: string;
  architecture: string;
  device: string;
  /** The adapter's description: on Dawn, the driver name and version. */
  driver: string;
  isSoftware: boolean;
  subgroups: boolean;
  subgroupMinSize: number;
  subgroupMaxSize: number;
  timestamps: boolean;
  features: string[];
  /** Options the Dawn instance was created with (timestamp quantization off); empty for a caller's device. */
  dawnOptions: string[];
  limits: Record<string, number>;
}

/** The results JSON (`--json`): everything needed to compare two runs and to draw the charts. */
export interface BenchReport {
  schemaVersion: typeof SCHEMA_VERSION;
  date: string;
  git: { revision: string; dirty: boolean | null };
  runtime: { node: string; platform: string; arch: string };
  device: DeviceRecord;
  suite: 'quick' | 'full';
  capacity: number;
  reps: number;
  warmup: number;
  /** Minimum warm-up work per measurement, ms. */
  warmupMs: number;
  loads: number[];
  keys: { distribution: 'uniform' | 'zipf'; zipfExponent?: number };
  roofline: Roofline;
  results: ResultRow[];
  skipped: SkippedRow[];
  /** Every result ok. */
  ok: boolean;
  /** Wall-clock seconds of the whole run. */
  seconds: number;
}

function isStats(x: unknown): boolean {
  if (typeof x !== 'object' || x === null) return false;
  const s = x as Record<string, unknown>;
  return ['median', 'min', 'max', 'spread', 'n'].every((k) => typeof s[k] === 'number');
}

/** Problems that make `x` not a valid report of this schema version (empty when valid). */
export function validateReport(x: unknown): string[] {
  const problems: string[] = [];
  if (typeof x !== 'object' || x === null) return ['not an object'];
  const r = x as Record<string, unknown>;
  if (r.schemaVersion !== SCHEMA_VERSION) problems.push(`schemaVersion is ${String(r.schemaVersion)}, expected ${SCHEMA_VERSION}`);
  for (const k of ['date', 'suite']) if (typeof r[k] !== 'string') problems.push(`${k} is not a string`);
  for (const k of ['capacity', 'reps', 'warmup', 'seconds']) if (typeof r[k] !== 'number') problems.push(`${k} is not a number`);
  const git = r.git as Record<string, unknown> | undefined;
  if (typeof git?.revision !== 'string') problems.push('git.revision is not a string');
  const device = r.device as Record<string, unknown> | undefined;
  if (typeof device?.description !== 'string' || typeof device?.driver !== 'string' || typeof device?.limits !== 'object') {
    problems.push('device lacks description, driver or limits');
  }
  const roofline = r.roofline as Record<string, Record<string, unknown>> | undefined;
  for (const k of ['gather4', 'gather128', 'copy']) {
    if (!isStats(roofline?.[k]?.gpuMs) || typeof roofline?.[k]?.opsPerSecond !== 'number') problems.push(`roofline.${k} is incomplete`);
  }
  if (!Array.isArray(r.results)) return [...problems, 'results is not an array'];
  r.results.forEach((row: Record<string, unknown>, i) => {
    const where = `results[${i}]`;
    for (const k of ['table', 'workload', 'operation']) if (typeof row[k] !== 'string') problems.push(`${where}.${k} is not a string`);
    for (const k of ['load', 'ops']) if (typeof row[k] !== 'number') problems.push(`${where}.${k} is not a number`);
    if (typeof row.ok !== 'boolean') problems.push(`${where}.ok is not a boolean`);
    if (row.gpuMs !== null && !isStats(row.gpuMs)) problems.push(`${where}.gpuMs is not stats`);
    if (row.e2eMs !== undefined && !isStats(row.e2eMs)) problems.push(`${where}.e2eMs is not stats`);
    for (const k of ['gops', 'shareOfGather'])
      if (row[k] !== null && typeof row[k] !== 'number') problems.push(`${where}.${k} is not a number or null`);
  });
  if (!Array.isArray(r.skipped)) problems.push('skipped is not an array');
  if (typeof r.ok !== 'boolean') problems.push('ok is not a boolean');
  return problems;
}
