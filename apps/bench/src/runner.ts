import type { Gpu } from '@gpuhash/core';
import { encodeGenerate } from './gpu/streams';
import { type HostLink, hostLinkFloorMs } from './host-link';
import { assertKeyStreamsCover } from './keys';
import type { Progress } from './progress';
import type { ResultRow, SkippedRow } from './results';
import type { BenchTable, TableEntry } from './tables/types';
import { chunkBuffer, chunksOf } from './workloads/chunks';
import type { KeyBuffers, Workload, WorkloadContext } from './workloads/context';
import { MIXED_BATCH_DIVISOR } from './workloads/mixed';

/** What to run: tables x workloads x loads, at one capacity. */
export interface RunPlan {
  tables: readonly TableEntry[];
  workloads: readonly Workload[];
  loads: readonly number[];
  capacity: number;
  reps: number;
  warmup: number;
  /** Minimum warm-up time per measurement, ms (0 on software adapters, whose clocks do not drop). */
  warmupMs: number;
  batchLog2: number;
  zipf: number | null;
  e2e: boolean;
  /** Keys per buffer of a key stream; default: as many as one storage binding holds (keyChunk). */
  keyChunk?: number;
}

export interface TableRun {
  results: ResultRow[];
  skipped: SkippedRow[];
}

/** Why a workload cannot run on a table, or null when it can. */
export function unsupportedReason(entry: TableEntry, workload: Workload): string | null {
  const missing = workload.requires.filter((c) => !entry.capabilities.has(c));
  return missing.length === 0 ? null : `${entry.name} does not support ${missing.join(', ')}`;
}

/** Load factors of the plan that a table is benchmarked at. */
export function loadsFor(entry: TableEntry, plan: RunPlan): number[] {
  return plan.loads.filter((l) => l <= entry.maxLoad + 1e-9);
}

/** Whether the plan measures a workload end to end on a table. */
function hasEndToEnd(entry: TableEntry, w: Workload, plan: RunPlan): boolean {
  return plan.e2e && w.endToEnd !== undefined && entry.capabilities.has('host');
}

/** Steps the progress bar counts for a plan (one per table, workload and load, GPU and end to end). */
export function countSteps(plan: RunPlan): number {
  let steps = 0;
  for (const entry of plan.tables) {
    for (const w of plan.workloads) {
      if (unsupportedReason(entry, w) !== null) continue;
      const loads = w.perLoad ? loadsFor(entry, plan).length : 1;
      steps += hasEndToEnd(entry, w, plan) ? 2 * loads : loads;
    }
  }
  return steps;
}

/** A failed row for a workload that threw before it could report. */
function failedRow(table: string, workload: string, load: number, error: unknown): ResultRow {
  const message = error instanceof Error ? error.message : String(error);
  return {
    table,
    workload,
    load,
    operation: '-',
    ops: 0,
    gpuMs: null,
    gops: null,
    shareOfGather: null,
    ok: false,
    note: message.split('\n')[0] ?? message,
  };
}

/** Keys per buffer of a stream: the largest power of two one storage binding holds, or the plan's. */
export function keyChunk(gpu: Gpu, plan: Pick<RunPlan, 'keyChunk'>): number {
  return plan.keyChunk ?? gpu.bindingElements(4);
}

function allocateKeys(gpu: Gpu, length: number, chunk: number): KeyBuffers {
  const chunks = chunksOf({ chunk }, length);
  const stream = (label: string) => chunks.map((c) => gpu.createBuffer(4 * c.count, `bench.${label}.${c.index}`));
  const keys: KeyBuffers = {
    length,
    chunk,
    hitKeys: stream('hit-keys'),
    hitValues: stream('hit-values'),
    missKeys: stream('miss-keys'),
    outValues: stream('out-values'),
    outFound: stream('out-found'),
    scratch: gpu.createBuffer(4 * Math.min(length, chunk), 'bench.scratch'),
  };
  for (const c of chunks) {
    const encoder = gpu.device.createCommandEncoder({ label: 'bench.generate-streams' });
    const at = (s: GPUBuffer[]) => chunkBuffer(s, c.index);
    encodeGenerate(gpu, encoder, { n: c.count, start: c.first }, at(keys.hitKeys), at(keys.hitValues));
    encodeGenerate(gpu, encoder, { n: c.count, start: c.first, miss: true }, at(keys.missKeys));
    gpu.submit([encoder.finish()]);
  }
  return keys;
}

function destroyKeys(keys: KeyBuffers): void {
  for (const stream of [keys.hitKeys, keys.hitValues, keys.missKeys, keys.outValues, keys.outFound]) for (const b of stream) b.destroy();
  keys.scratch.destroy();
}

/** A whole stream read back into one host array. */
async function readStream(gpu: Gpu, keys: KeyBuffers, stream: GPUBuffer[]): Promise<Uint32Array> {
  const out = new Uint32Array(keys.length);
  for (const c of chunksOf(keys, keys.length))
    out.set(new Uint32Array(await gpu.readBytes(chunkBuffer(stream, c.index), 0, 4 * c.count)), c.first);
  return out;
}

/** Runs every workload of the plan on one table. Failures become failed rows; only a lost device throws. */
export async function runTable(
  gpu: Gpu,
  entry: TableEntry,
  plan: RunPlan,
  gatherPerSecond: number,
  progress: Progress,
  hostLink?: HostLink,
): Promise<TableRun> {
  const results: ResultRow[] = [];
  const skipped: SkippedRow[] = [];
  const loads = loadsFor(entry, plan);
  for (const l of plan.loads) {
    if (!loads.includes(l))
      skipped.push({ table: entry.name, workload: '*', load: l, note: `${entry.name} is benchmarked up to load ${entry.maxLoad}` });
  }
  const runnable: Workload[] = [];
  for (const w of plan.workloads) {
    const reason = unsupportedReason(entry, w);
    if (reason) skipped.push({ table: entry.name, workload: w.name, note: reason });
    else runnable.push(w);
  }
  if (runnable.length === 0 || loads.length === 0) return { results, skipped };

  const maxLoad = Math.max(...loads);
  const length = Math.max(1, Math.round(maxLoad * plan.capacity));
  let keys: KeyBuffers | undefined;
  let table: BenchTable | undefined;
  let ctx: WorkloadContext | undefined;
  try {
    // Key indices used: hits up to the largest build plus a mixed batch's new keys, misses up to the largest build.
    assertKeyStreamsCover(length + Math.ceil(plan.capacity / MIXED_BATCH_DIVISOR), length, entry.reservedKeys, entry.name);
    table = await entry.create(gpu, plan.capacity);
    const k = allocateKeys(gpu, length, keyChunk(gpu, plan));
    keys = k;
    let hostKeys: Promise<{ keys: Uint32Array; values: Uint32Array; misses: Uint32Array }> | undefined;
    ctx = {
      gpu,
      entry,
      table,
      capacity: plan.capacity,
      reps: plan.reps,
      warmup: plan.warmup,
      warmupMs: plan.warmupMs,
      loads,
      batchLog2: plan.batchLog2,
      zipf: plan.zipf,
      keys: k,
      gatherPerSecond,
      hostKeys() {
        hostKeys ??= (async () => ({
          keys: await readStream(gpu, k, k.hitKeys),
          values: await readStream(gpu, k, k.hitValues),
          misses: await readStream(gpu, k, k.missKeys),
        }))();
        return hostKeys;
      },
    };
  } catch (error) {
    for (const w of runnable) results.push(failedRow(entry.name, w.name, 0, error));
    progress.advance(countSteps({ ...plan, tables: [entry] }));
    if (keys) destroyKeys(keys);
    table?.destroy();
    return { results, skipped };
  }

  for (const w of runnable) {
    for (const load of w.perLoad ? loads : [maxLoad]) {
      progress.step(`${entry.name} ${w.name}${w.perLoad ? ` @ ${load}` : ''}`);
      try {
        results.push(...(await w.run(ctx, load)));
      } catch (error) {
        results.push(failedRow(entry.name, w.name, load, error));
        // A lost device fails everything after it; stop instead of failing every step slowly.
        if (gpu.isLost) throw error;
      }
    }
  }
  // End-to-end runs last: their host phases leave the GPU idle, and its clock drops.
  for (const w of runnable) {
    if (!hasEndToEnd(entry, w, plan) || !w.endToEnd) continue;
    for (const load of w.perLoad ? loads : [maxLoad]) {
      progress.step(`${entry.name} ${w.name} end to end${w.perLoad ? ` @ ${load}` : ''}`);
      const row = results.find((r) => r.workload === w.name && r.load === load && r.ok);
      if (!row) continue;
      try {
        const e2e = await w.endToEnd(ctx, load);
        row.e2eMs = e2e.stats;
        row.e2eBytes = e2e.bytes;
        row.e2eGops = row.ops / (e2e.stats.median * 1e6);
        if (hostLink) row.e2eShareOfFloor = hostLinkFloorMs(hostLink, e2e.bytes) / e2e.stats.median;
        if (e2e.problems.length > 0) fail(row, e2e.problems.map((p) => `end to end: ${p}`).join('; '));
      } catch (error) {
        fail(row, `end to end: ${error instanceof Error ? error.message : String(error)}`);
        if (gpu.isLost) throw error;
      }
    }
  }
  ctx.table.destroy();
  destroyKeys(ctx.keys);
  return { results, skipped };
}

function fail(row: ResultRow, problem: string): void {
  row.ok = false;
  row.note = row.note ? `${problem}; ${row.note}` : problem;
}
