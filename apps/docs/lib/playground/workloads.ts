import { Op } from '@gpuhash/core';
import { hitStream, missStream, seededRandom, valueFor, valuesFor } from './keys';
import type { PlaygroundTable } from './tables';

export type WorkloadId = 'insert' | 'find-hits' | 'find-misses' | 'mixed';

export interface WorkloadInfo {
  id: WorkloadId;
  name: string;
  /** What a run does, for the form. */
  description: string;
  /** What "size" counts in this workload. */
  sizeMeans: string;
}

export const WORKLOADS: readonly WorkloadInfo[] = [
  {
    id: 'insert',
    name: 'bulk insert',
    description: 'Inserts the keys in 16 batches, so you see throughput fall as the load rises; then finds every key to check it.',
    sizeMeans: 'keys inserted',
  },
  {
    id: 'find-hits',
    name: 'find hits',
    description: 'Inserts the keys in one batch (not timed), then looks all of them up in 16 timed batches.',
    sizeMeans: 'keys inserted, then found',
  },
  {
    id: 'find-misses',
    name: 'find misses',
    description: 'Inserts the keys in one batch (not timed), then looks up as many keys that are not in the table.',
    sizeMeans: 'keys inserted, and as many missing keys looked up',
  },
  {
    id: 'mixed',
    name: 'mixed',
    description:
      'Inserts half the keys (not timed), then runs 16 mixed batches of 50% inserts of new keys, 30% finds and 20% erases of present keys, each batch in one dispatch.',
    sizeMeans: 'operations (plus half as many keys inserted first)',
  },
];

export interface RunSpec {
  workload: WorkloadId;
  capacity: number;
  /** Keys (or, for mixed, operations) in the run. */
  size: number;
  /** Timed batches (default 16, fewer for tiny runs). */
  steps?: number;
  /** Seed for the mixed workload's choices. */
  seed?: number;
}

export interface StepResult {
  step: number;
  ops: number;
  ms: number;
  opsPerSecond: number;
  /** The table's load factor after this step. */
  loadFactor: number;
}

export interface RunResult {
  workload: WorkloadId;
  capacity: number;
  size: number;
  /** Live keys the CPU reference says the table must hold. */
  expectedSize: number;
  loadFactor: number;
  timedOps: number;
  ms: number;
  opsPerSecond: number;
  /** Lookups (finds) that reported the key present. */
  found: number;
  expectedFound: number;
  /** Operations whose result differs from the CPU reference (a wrong value, a wrong flag or status). */
  mismatches: number;
  /** Inserts the table reported as not placed. */
  failed: number;
  steps: StepResult[];
}

/**
 * How a mixed batch of `batch` operations splits: 30% finds and 20% erases (rounded down), the
 * rest inserts. Rounding in favour of inserts means the table never runs out of keys to erase.
 */
export function mixedSplit(batch: number): { inserts: number; finds: number; erases: number } {
  const finds = Math.floor((3 * batch) / 10);
  const erases = Math.floor(batch / 5);
  return { inserts: batch - finds - erases, finds, erases };
}

/** Splits n operations into `steps` batches whose sizes differ by at most one. */
export function batchSizes(n: number, steps: number): number[] {
  const count = Math.max(1, Math.min(steps, n));
  const base = Math.floor(n / count);
  return Array.from({ length: count }, (_, i) => base + (i < n % count ? 1 : 0));
}

/** The largest size a workload accepts for a table of `capacity` slots that may reach `maxLoad`. */
export function maxSize(workload: WorkloadId, capacity: number, maxLoad: number): number {
  // Mixed runs also leave tombstones behind (erased slots stay claimed): keep them further from full.
  const load = workload === 'mixed' ? Math.min(maxLoad, 0.8) : maxLoad;
  return Math.floor(capacity * load);
}

/** Live keys a run leaves in the table: what its load factor will be computed from. */
export function expectedFinalSize(workload: WorkloadId, size: number, steps = 16): number {
  if (workload !== 'mixed') return size;
  let live = Math.max(1, Math.floor(size / 2));
  for (const count of batchSizes(size, steps)) {
    const { inserts, erases } = mixedSplit(count);
    live += inserts - erases;
  }
  return live;
}

export interface RunOptions {
  /** Milliseconds; performance.now in the browser. */
  now: () => number;
  /** Called after every timed step, for live charts. */
  onStep?: (step: StepResult) => void;
  /** Stops the run between two GPU calls (never during one): the run rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Counts lookups and how many disagree with what the keys should map to. */
class Tally {
  found = 0;
  expectedFound = 0;
  mismatches = 0;

  lookups(keys: Uint32Array, result: { values: Uint32Array; found: Uint8Array }, present: boolean): void {
    if (present) this.expectedFound += keys.length;
    for (let i = 0; i < keys.length; i++) {
      const hit = result.found[i] === 1;
      if (hit) this.found++;
      if (hit !== present || (hit && result.values[i] !== valueFor(keys[i] as number))) this.mismatches++;
    }
  }
}

/**
 * Runs one workload on a fresh table and checks every answer against what was inserted.
 * Throughput is wall-clock time around each awaited call (upload, kernel and read-back), which is
 * what a program calling the host API sees.
 */
export async function runWorkload(table: PlaygroundTable, spec: RunSpec, options: RunOptions): Promise<RunResult> {
  const n = spec.size;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`size must be a positive integer, got ${n}`);
  const sizes = batchSizes(n, spec.steps ?? 16);
  const hits = hitStream();
  const tally = new Tally();
  const steps: StepResult[] = [];
  let failed = 0;
  let expectedSize = 0;

  const timed = async (ops: number, body: () => Promise<void>): Promise<void> => {
    options.signal?.throwIfAborted();
    const start = options.now();
    await body();
    // A coarse clock can read 0 for a tiny step; a floor keeps the rate finite.
    const ms = Math.max(options.now() - start, 1e-3);
    const step = { step: steps.length + 1, ops, ms, opsPerSecond: (ops * 1000) / ms, loadFactor: table.loadFactor };
    steps.push(step);
    options.onStep?.(step);
  };
  const build = async (count: number): Promise<Uint32Array> => {
    options.signal?.throwIfAborted();
    const keys = hits.take(count);
    failed += (await table.insert(keys, valuesFor(keys))).failed;
    expectedSize += count;
    return keys;
  };

  switch (spec.workload) {
    case 'insert': {
      const inserted: Uint32Array[] = [];
      for (const count of sizes) {
        const keys = hits.take(count);
        const values = valuesFor(keys);
        await timed(count, async () => {
          failed += (await table.insert(keys, values)).failed;
        });
        inserted.push(keys);
        expectedSize += count;
      }
      for (const keys of inserted) {
        options.signal?.throwIfAborted();
        tally.lookups(keys, await table.find(keys), true);
      }
      break;
    }
    case 'find-hits':
    case 'find-misses': {
      const keys = await build(n);
      const misses = missStream();
      let offset = 0;
      for (const count of sizes) {
        const batch = spec.workload === 'find-hits' ? keys.subarray(offset, offset + count) : misses.take(count);
        offset += count;
        await timed(count, async () => {
          tally.lookups(batch, await table.find(batch), spec.workload === 'find-hits');
        });
      }
      break;
    }
    case 'mixed': {
      const live = Array.from(await build(Math.max(1, Math.floor(n / 2))));
      const random = seededRandom(spec.seed ?? 0x5eed);
      for (const count of sizes) {
        const batch = mixedBatch(count, live, hits.take(mixedSplit(count).inserts), random);
        const result = await runMixed(table, batch, timed);
        for (let i = 0; i < batch.keys.length; i++) {
          const op = batch.ops[i];
          const key = batch.keys[i] as number;
          if (op === Op.find) {
            tally.expectedFound++;
            if (result.status[i] === 1) tally.found++;
            if (result.status[i] !== 1 || result.values[i] !== valueFor(key)) tally.mismatches++;
          } else if (result.status[i] !== 1) {
            tally.mismatches++;
            if (op === Op.insert) failed++;
          }
        }
        expectedSize += batch.inserted - batch.erased;
      }
      break;
    }
  }

  const ms = steps.reduce((sum, s) => sum + s.ms, 0);
  const timedOps = steps.reduce((sum, s) => sum + s.ops, 0);
  return {
    workload: spec.workload,
    capacity: table.capacity,
    size: table.size,
    expectedSize,
    loadFactor: table.loadFactor,
    timedOps,
    ms,
    opsPerSecond: (timedOps * 1000) / ms,
    found: tally.found,
    expectedFound: tally.expectedFound,
    mismatches: tally.mismatches,
    failed,
    steps,
  };
}

interface MixedBatch {
  ops: Uint8Array;
  keys: Uint32Array;
  inserted: number;
  erased: number;
}

/**
 * One mixed batch whose outcome is certain however the GPU interleaves it: inserts use new keys,
 * finds and erases take distinct keys that were present before the batch. `live` is updated to
 * the keys present after it.
 */
export function mixedBatch(count: number, live: number[], fresh: Uint32Array, random: () => number): MixedBatch {
  const { finds, erases } = mixedSplit(count);
  const inserts = fresh.length;
  if (finds + erases > live.length)
    throw new RangeError(`a mixed batch needs ${finds + erases} present keys; the table has ${live.length}`);
  // Draw finds and erases without replacement: swap the chosen keys to the end of `live`.
  const chosen: number[] = [];
  for (let i = 0; i < finds + erases; i++) {
    const j = Math.floor(random() * (live.length - i));
    const last = live.length - 1 - i;
    [live[j], live[last]] = [live[last] as number, live[j] as number];
    chosen.push(live[last] as number);
  }
  const erasedKeys = chosen.slice(finds);
  live.length -= erases + finds;
  live.push(...chosen.slice(0, finds), ...fresh);

  const total = inserts + finds + erases;
  const ops = new Uint8Array(total);
  const keys = new Uint32Array(total);
  ops.fill(Op.insert, 0, inserts);
  keys.set(fresh, 0);
  ops.fill(Op.find, inserts, inserts + finds);
  keys.set(chosen.slice(0, finds), inserts);
  ops.fill(Op.erase, inserts + finds);
  keys.set(erasedKeys, inserts + finds);
  shuffle(ops, keys, random);
  return { ops, keys, inserted: inserts, erased: erases };
}

/** Interleaves the ops so that neighbouring invocations run different kinds of operation. */
function shuffle(ops: Uint8Array, keys: Uint32Array, random: () => number): void {
  for (let i = ops.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [ops[i], ops[j]] = [ops[j] as number, ops[i] as number];
    [keys[i], keys[j]] = [keys[j] as number, keys[i] as number];
  }
}

/** A mixed batch through `apply`, or as three plain batches for a table without one. */
async function runMixed(
  table: PlaygroundTable,
  batch: MixedBatch,
  timed: (ops: number, body: () => Promise<void>) => Promise<void>,
): Promise<{ values: Uint32Array; status: Uint8Array }> {
  const values = valuesFor(batch.keys);
  let result: { values: Uint32Array; status: Uint8Array } = {
    values: new Uint32Array(batch.keys.length),
    status: new Uint8Array(batch.keys.length),
  };
  await timed(batch.keys.length, async () => {
    if (table.apply) {
      result = await table.apply(batch.ops, batch.keys, values);
      return;
    }
    const pick = (op: number) => batch.keys.filter((_, i) => batch.ops[i] === op);
    const inserts = pick(Op.insert);
    const failedInserts = (await table.insert(inserts, valuesFor(inserts))).failed;
    const finds = await table.find(pick(Op.find));
    const erased = await table.erase(pick(Op.erase));
    // Per-op status from the batch answers: finds are exact, inserts and erases by count.
    let f = 0;
    let insertFailuresLeft = failedInserts;
    let erasesLeft = erased;
    for (let i = 0; i < batch.keys.length; i++) {
      const op = batch.ops[i];
      if (op === Op.find) {
        result.values[i] = finds.values[f] as number;
        result.status[i] = finds.found[f++] as number;
      } else if (op === Op.insert) {
        result.status[i] = insertFailuresLeft-- > 0 ? 0 : 1;
      } else {
        result.status[i] = erasesLeft-- > 0 ? 1 : 0;
      }
    }
  });
  return result;
}
