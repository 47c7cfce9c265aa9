import type { DeviceArray, Dictionary, Gpu } from '@gpuhash/core';
import { LinearProbeTable } from '@gpuhash/linear-probe';
import { HostPartition, ShardedTable } from '@gpuhash/sharded';
import { samplesOf, timeReps } from '../gpu/time-reps';
import { benchKey, benchMiss, benchValue } from '../keys';
import { median } from '../stats';
import { TABLE_PACKAGES } from '../tables/packages.generated';

/**
 * The sharded table's measurements, shared by `gpuhash-bench sharded` and the GPU host's
 * perf-sharded script: one sharded table over G GPUs of this thread (G = 1 is the baseline),
 * each shard a table of `slotsLog2` slots built to `load`:
 * - find GPU time: each shard's own find kernel over its share of the keys (device-resident,
 *   partitioned on the host beforehand), timestamps, every GPU at once; per shard and summed.
 * - end to end from host arrays: `table.find(hostKeys)` (partition, every shard's upload, find and
 *   readback at once, merge), wall clock; and the build, `table.insert(hostKeys, values)`.
 * - a device-resident batch on GPU 0: partitioned there, the other shards' keys through the host
 *   and back, answers scattered into batch order (stage times), and the raw copy rate.
 * Every answer is checked; `wrong` counts the ones that differ.
 */

/** The names `tableFactory` knows: every table package of the workspace. */

/**
 * Untimed finds before each shard's timed ones, in the same submission. With two GPUs driven at
 * once, the warm-up sized from a probe's time left one GPU's clock down: one shard's finds read
 * 2.4-3.3x slower (two H100s, 186f712). After 40 warm-up finds both ran at one GPU's rate, alone or
 * together.
 */
export const SHARD_WARMUP_REPS = 32;
export const SHARD_TABLES: readonly string[] = TABLE_PACKAGES.map((p) => p.id);

/**
 * A table of exactly `capacity` slots that never grows: linear-probe with unbounded probing (as
 * the bench runs it, so load 0.9 builds at 2^27), the others through their `create`.
 */
export function createShardTable(name: string, gpu: Gpu, capacity: number): Promise<Dictionary> {
  if (name === 'linear-probe')
    return LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: capacity }) as Promise<Dictionary>;
  const pkg = TABLE_PACKAGES.find((p) => p.id === name);
  if (!pkg) throw new Error(`no table '${name}' (known: ${SHARD_TABLES.join(', ')})`);
  return pkg.table.create(gpu, { capacity, growth: false });
}

export interface ShardedPlan {
  table: string;
  gpus: readonly Gpu[];
  /** Slots per shard: 2^slotsLog2. */
  slotsLog2: number;
  load: number;
  reps: number;
  warmup: number;
  warmupMs: number;
  /** Keys of the device-resident batch: 2^deviceBatchLog2 (capped at the keys inserted). */
  deviceBatchLog2: number;
  e2e: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** One measurement. */
export interface ShardedRow {
  gpus: number;
  /** 'local' (shards on Gpus of this thread), 'worker' or 'process'. */
  via: string;
  measure: string;
  keys: number;
  /** GPU ms per shard (medians), where timed with timestamps. */
  shardGpuMs?: number[];
  /** Wall-clock ms (median), end-to-end measures. */
  wallMs?: number;
  /** Billions of keys per second: GPU rows Σ over shards of keys_s / ms_s (they run at once); wall rows keys / ms. */
  gops: number;
  /** GPU rows: keys / Σ ms_s (the GPU time summed across shards). */
  gopsSummedTime?: number;
  wrong: number;
  note?: string;
}

/** The j-th benchmark key, skipping the top 16 u32 values (tables reserve some of them). */
export function benchKeys(n: number, miss = false): Uint32Array {
  const out = new Uint32Array(n);
  for (let j = 0, i = 0; i < n; j++) {
    const k = miss ? benchMiss(j) : benchKey(j);
    if (k < 0xfffffff0) out[i++] = k;
  }
  return out;
}

export function benchValues(n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let j = 0; j < n; j++) out[j] = benchValue(j);
  return out;
}

async function wall<T>(reps: number, body: () => Promise<T>): Promise<{ ms: number; last: T }> {
  const times: number[] = [];
  let last: T | undefined;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    last = await body();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), last: last as T };
}

/** Answers that differ from (found, value) = (hit, values[i]). */
function wrongAnswers(found: ArrayLike<number>, got: ArrayLike<number>, hit: boolean, values: Uint32Array): number {
  let wrong = 0;
  for (let i = 0; i < found.length; i++) {
    if (hit ? found[i] !== 1 || got[i] !== values[i] : found[i] !== 0) wrong++;
  }
  return wrong;
}

/** Runs every measurement on one sharded table over `plan.gpus`. */
export async function measureSharded(plan: ShardedPlan): Promise<ShardedRow[]> {
  const G = plan.gpus.length;
  const log = plan.log ?? (() => {});
  const capacity = 2 ** plan.slotsLog2;
  const n = Math.floor(plan.load * capacity) * G;
  const rows: ShardedRow[] = [];
  const row = (r: Omit<ShardedRow, 'gpus' | 'via'>) => rows.push({ gpus: G, via: 'local', ...r });
  log(`${G} GPU(s): ${n} keys into ${G} x 2^${plan.slotsLog2} slots of ${plan.table}`);
  const keys = benchKeys(n);
  const misses = benchKeys(n, true);
  const values = benchValues(n);
  const table = await ShardedTable.create(plan.gpus, (gpu) => createShardTable(plan.table, gpu, capacity));
  const owned: DeviceArray[] = [];
  try {
    const t0 = performance.now();
    const built = await table.insert(keys, values);
    const buildMs = performance.now() - t0;
    row({
      measure: 'insert e2e (build)',
      keys: n,
      wallMs: buildMs,
      gops: n / buildMs / 1e6,
      wrong: built.failed.length + Math.abs(table.size - n),
      note: `shard sizes ${table.shardSizes.join(', ')}`,
    });

    // Each shard's share of the queries, on its own GPU.
    const part = new HostPartition(keys, 1, G, table.seed);
    const hitParts = part.split(keys);
    const valueParts = part.split(values);
    const missParts = new HostPartition(misses, 1, G, table.seed).split(misses);
    for (const [kind, parts] of [
      ['hit', hitParts],
      ['miss', missParts],
    ] as const) {
      const perShard = await Promise.all(
        plan.gpus.map(async (gpu, s) => {
          const q = gpu.upload(parts[s] as Uint32Array, `sharded.bench.${kind}`);
          const count = q.length;
          const outValues = gpu.createArray('u32', count);
          const outFound = gpu.createArray('u32', count);
          owned.push(q, outValues, outFound);
          const shard = table.shard(s) as Dictionary;
          const times = await timeReps(
            gpu,
            (encoder, time) => shard.encodeFind(encoder, q.buffer, count, outValues.buffer, outFound.buffer, time('find')),
            {
              warmup: Math.max(plan.warmup, SHARD_WARMUP_REPS),
              reps: plan.reps,
              warmupMs: plan.warmupMs,
              label: `sharded.find-${kind}.${s}`,
            },
          );
          const found = await gpu.download(outFound);
          const got = await gpu.download(outValues);
          return {
            count,
            ms: median(samplesOf(times, 'find')),
            wrong: wrongAnswers(found, got, kind === 'hit', valueParts[s] as Uint32Array),
          };
        }),
      );
      const sumMs = perShard.reduce((c, p) => c + p.ms, 0);
      row({
        measure: `find-${kind} GPU`,
        keys: n,
        shardGpuMs: perShard.map((p) => p.ms),
        gops: perShard.reduce((c, p) => c + p.count / p.ms / 1e6, 0),
        gopsSummedTime: n / sumMs / 1e6,
        wrong: perShard.reduce((c, p) => c + p.wrong, 0),
        note: `per shard ${perShard.map((p) => (p.count / p.ms / 1e6).toFixed(2)).join(' + ')} G/s`,
      });
      log(`  find-${kind} GPU: ${rows[rows.length - 1]?.gops.toFixed(2)} G/s`);
    }

    if (plan.e2e) {
      for (const [kind, q] of [
        ['hit', keys],
        ['miss', misses],
      ] as const) {
        const { ms, last } = await wall(Math.min(plan.reps, 3), () => table.find(q));
        row({
          measure: `find-${kind} e2e`,
          keys: n,
          wallMs: ms,
          gops: n / ms / 1e6,
          wrong: wrongAnswers(last.found, last.values, kind === 'hit', values),
        });
        log(`  find-${kind} e2e: ${(n / ms / 1e6).toFixed(3)} G/s`);
      }
    }

    // A device-resident batch on GPU 0.
    const m = Math.min(n, 2 ** plan.deviceBatchLog2);
    const home = plan.gpus[0] as Gpu;
    const dq = home.upload(keys.subarray(0, m), 'sharded.bench.device-batch');
    owned.push(dq);
    const stages: Array<{ partitionMs: number; shardsMs: number; scatterMs: number; crossBytes: number }> = [];
    let wrong = 0;
    const { ms } = await wall(plan.reps, async () => {
      const r = await table.find(dq, { home, onTiming: (t) => stages.push(t) });
      const found = await home.download(r.found);
      const got = await home.download(r.values);
      r.values.destroy();
      r.found.destroy();
      wrong = wrongAnswers(found, got, true, values.subarray(0, m));
    });
    const st = (k: 'partitionMs' | 'shardsMs' | 'scatterMs') => median(stages.map((s) => s[k]));
    row({
      measure: 'device batch find (on GPU 0)',
      keys: m,
      wallMs: ms,
      gops: m / ms / 1e6,
      wrong,
      note: `partition ${st('partitionMs').toFixed(2)} ms, shards ${st('shardsMs').toFixed(2)} ms, scatter ${st('scatterMs').toFixed(2)} ms, ${bytes(stages[0]?.crossBytes ?? 0)} through the host and back`,
    });
    if (G > 1) {
      // The copy alone: m keys GPU 0 -> host -> GPU 1 (what a shard's part of a device batch costs each way).
      const other = plan.gpus[1] as Gpu;
      const { ms: copyMs } = await wall(plan.reps, async () => {
        const host = await home.download(dq);
        const there = other.upload(host, 'sharded.bench.copy');
        await other.finish();
        there.destroy();
      });
      row({
        measure: 'copy GPU 0 -> host -> GPU 1',
        keys: m,
        wallMs: copyMs,
        gops: m / copyMs / 1e6,
        wrong: 0,
        note: `${((4 * m) / copyMs / 1e6).toFixed(2)} GB/s`,
      });
    }
  } finally {
    for (const a of owned) a.destroy();
    table.destroy();
    await Promise.all(plan.gpus.map((g) => g.finish().catch(() => {})));
  }
  return rows;
}

function bytes(b: number): string {
  return b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / 1024).toFixed(1)} KiB`;
}

/** Ratios of the G-GPU rows to the 1-GPU rows of the same measure (throughput ratio). */
export function scalingRows(one: readonly ShardedRow[], many: readonly ShardedRow[]): Array<{ measure: string; ratio: number }> {
  return many.flatMap((r) => {
    const base = one.find((o) => o.measure === r.measure && o.via === r.via);
    return base && base.gops > 0 ? [{ measure: `${r.measure} (${r.via})`, ratio: r.gops / base.gops }] : [];
  });
}

/** The rows as a markdown table. */
export function formatShardedRows(rows: readonly ShardedRow[]): string {
  const lines = [
    '| GPUs | via | measure | keys | GPU ms per shard | wall ms | G keys/s | G/s by summed GPU time | wrong | note |',
    '| ---: | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.gpus} | ${r.via} | ${r.measure} | ${r.keys} | ${r.shardGpuMs ? r.shardGpuMs.map((m) => m.toFixed(3)).join(', ') : ''} | ${
        r.wallMs === undefined ? '' : r.wallMs.toFixed(2)
      } | ${r.gops.toFixed(3)} | ${r.gopsSummedTime === undefined ? '' : r.gopsSummedTime.toFixed(3)} | ${r.wrong} | ${r.note ?? ''} |`,
    );
  }
  return lines.join('\n');
}
