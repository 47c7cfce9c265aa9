import { DeviceArray, encodeTimedSpan, type Gpu, GpuOutOfMemoryError, type Kernel, LimitExceededError, requestGpu } from '@gpuhash/core';
import { HkvCache, type ScorePolicy } from '@gpuhash/hkv';
import { composeWgsl, fmix32, fmix32Module, gridModule } from '@gpuhash/kernels';
import { describeDevice } from '../device';
import { gitInfo } from '../git';
import { type EncodeRep, samplesOf, timeReps } from '../gpu/time-reps';
import { measureRoofline } from '../roofline';
import { gops, type Stats, summarize } from '../stats';

/**
 * HKV's own workloads (a cache is not a Dictionary, so it has its own suite, printed in the same
 * roofline-share format as the dictionary bench):
 * - throughput: insertOrAssign of the whole load in one batch (chunked only where a batch would pass
 *   a binding), find of every inserted key and of as many absent ones, at each load and dim, LRU,
 *   unique keys as NVIDIA's benchmark assumes; GPU time from timestamps; "kept" = size / inserted.
 * - hitrate: the paper's Exp #3c (Table 8: Config B, load 1.0, single-bucket, capacity 128 M, batches
 *   of 1 M), at the paper's ratios: universe = 10 x capacity keys drawn as Zipf(alpha) ranks
 *   (independent draws), batches of capacity/128 keys; each batch is found, then insertOrAssign-ed
 *   (LFU increment 1; the epoch policies take the batch index as epoch); hit rate = keys found /
 *   keys looked up (duplicates in a batch each count), over 8 x capacity keys after a warm-up of
 *   4 x capacity. The paper gives no universe, warm-up or run length: 10 x capacity is the universe at
 *   which its LRU row is the Che approximation of LRU and its LFU row the mass of the capacity most
 *   popular keys (perfect LFU), within 0.3 points. Only alpha 0.5 is scale-free: at 0.99 and 1.25 the
 *   hit rate grows with log(capacity), so a small cache reads lower than 128 M slots
 *   (apps/bench/results/hkv/2026-11-26-swiftshader-hitrate-*.md has the model and measurements).
 * - hosttier: the host API's wall-clock insertOrAssign and find (dim 32, half the capacity's keys)
 *   with every value on the GPU, half of them in host memory, and all of them there: the staged path
 *   (GPU finds slots, the host gathers and scatters) is bound by readbacks and the host link.
 * - topn: custom scores (uniform random u64), 5x capacity distinct keys inserted through
 *   insertAndEvict, in single- and dual-bucket mode: the load at the first eviction (measured with
 *   batches of 128 keys, as NVIDIA's dual-bucket test, until it happens; then batches of
 *   capacity/64), and the share of the capacity highest-scored keys still cached at the end.
 */

export interface HkvBenchOptions {
  suite: 'quick' | 'full';
  workloads: readonly string[];
  capacityLog2: number;
  dims: readonly number[];
  loads: readonly number[];
  reps: number;
  alphas: readonly number[];
  policies: readonly ScorePolicy[];
  /** Slots of the hitrate cache (log2). */
  hitrateLog2: number;
  /** Slots of the topn caches (log2). */
  topnLog2: number;
  json?: string;
  quiet: boolean;
  /** Minimum GPU warm-up per measurement (ms; default 500 on a GPU, 0 on a software adapter). */
  warmupMs?: number;
  /** Lanes per cooperative group, or 0 for one invocation per key (default: the cache's choice). */
  tile?: number;
}

export interface HkvRow {
  workload: string;
  operation: string;
  dim?: number;
  load?: number;
  policy?: ScorePolicy;
  alpha?: number;
  ops?: number;
  gpuMs?: Stats;
  gops?: number | null;
  shareOfGather?: number | null;
  /** throughput: size / keys inserted; hitrate: hits / lookups; topn: retention. */
  fraction?: number;
  firstEvictionLoad?: number;
  ok: boolean;
  note?: string;
}

export const HKV_SUITES = {
  quick: {
    capacityLog2: 13,
    dims: [1, 32],
    loads: [0.5, 1.0],
    reps: 3,
    alphas: [0.5, 0.99],
    policies: ['lru', 'lfu'] as ScorePolicy[],
    hitrateLog2: 12,
    topnLog2: 12,
  },
  full: {
    capacityLog2: 27,
    dims: [1, 32, 64],
    loads: [0.5, 0.75, 0.9, 1.0],
    reps: 5,
    alphas: [0.5, 0.75, 0.99, 1.25],
    policies: ['lru', 'lfu', 'epochLru', 'epochLfu'] as ScorePolicy[],
    hitrateLog2: 22,
    topnLog2: 20,
  },
};

export const HKV_WORKLOADS = ['throughput', 'hitrate', 'topn', 'hosttier'] as const;

export function hkvUsage(): string {
  return `usage: gpuhash-bench hkv [quick|full] [options]

HierarchicalKV's workloads: throughput (insertOrAssign, find hit, find miss per load and dim), hitrate
(continuous Zipf ingestion at load 1.0, per policy and exponent) and topn (top-N retention, first eviction).

  quick                  2^${HKV_SUITES.quick.capacityLog2} slots, dims ${HKV_SUITES.quick.dims}, loads ${HKV_SUITES.quick.loads}
  full                   2^${HKV_SUITES.full.capacityLog2} slots, dims ${HKV_SUITES.full.dims}, loads ${HKV_SUITES.full.loads} (hitrate and hosttier at 2^22, topn at 2^20)
  --alphas LIST          Zipf exponents of the hitrate workload (quick ${HKV_SUITES.quick.alphas}, full ${HKV_SUITES.full.alphas})
  --policies LIST        policies of the hitrate workload (quick ${HKV_SUITES.quick.policies}, full ${HKV_SUITES.full.policies})
  --hitrate-log2 N       slots of the hitrate cache (quick ${HKV_SUITES.quick.hitrateLog2}, full ${HKV_SUITES.full.hitrateLog2})
  --topn-log2 N          slots of the topn caches (quick ${HKV_SUITES.quick.topnLog2}, full ${HKV_SUITES.full.topnLog2})
  --workload LIST        ${HKV_WORKLOADS.join(',')} (default all)
  --capacity-log2 N      slots of the throughput cache
  --dims LIST            value dims of the throughput workload
  --loads LIST           loads of the throughput workload
  --reps N               timed repetitions (median reported)
  --warmup-ms N          GPU warm-up before each measurement (default 500 on a GPU, 0 on software)
  --tile N               lanes per cooperative group (1..32), 0 for one invocation per key
  --json FILE            write the rows as JSON
  --quiet                no progress lines`;
}

export function parseHkvArgs(argv: readonly string[]): HkvBenchOptions | 'help' {
  let suite: 'quick' | 'full' = 'quick';
  const o: Partial<HkvBenchOptions> = {};
  let quiet = false;
  const numbers = (t: string) => t.split(',').map((x) => Number(x.trim()));
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--') continue;
    if (a === 'quick' || a === 'full') suite = a;
    else if (a === '-h' || a === '--help') return 'help';
    else if (a === '--workload' || a === '--workloads') {
      const list = value().split(',');
      for (const w of list) if (!(HKV_WORKLOADS as readonly string[]).includes(w)) throw new Error(`unknown hkv workload '${w}'`);
      o.workloads = list;
    } else if (a === '--capacity-log2') o.capacityLog2 = Number(value());
    else if (a === '--dims') o.dims = numbers(value());
    else if (a === '--loads') o.loads = numbers(value());
    else if (a === '--reps') o.reps = Number(value());
    else if (a === '--warmup-ms') o.warmupMs = Number(value());
    else if (a === '--tile') o.tile = Number(value());
    else if (a === '--alphas') o.alphas = numbers(value());
    else if (a === '--policies') {
      const list = value().split(',') as ScorePolicy[];
      for (const p of list)
        if (!(['lru', 'lfu', 'epochLru', 'epochLfu'] as string[]).includes(p)) throw new Error(`unknown hitrate policy '${p}'`);
      o.policies = list;
    } else if (a === '--hitrate-log2') o.hitrateLog2 = Number(value());
    else if (a === '--topn-log2') o.topnLog2 = Number(value());
    else if (a === '--json') o.json = value();
    else if (a === '--quiet') quiet = true;
    else throw new Error(`unknown hkv option ${a}`);
  }
  const preset = HKV_SUITES[suite];
  return {
    suite,
    workloads: o.workloads ?? [...HKV_WORKLOADS],
    capacityLog2: o.capacityLog2 ?? preset.capacityLog2,
    dims: o.dims ?? preset.dims,
    loads: o.loads ?? preset.loads,
    reps: o.reps ?? preset.reps,
    alphas: o.alphas ?? preset.alphas,
    policies: o.policies ?? preset.policies,
    hitrateLog2: o.hitrateLog2 ?? preset.hitrateLog2,
    topnLog2: o.topnLog2 ?? preset.topnLog2,
    json: o.json,
    quiet,
    warmupMs: o.warmupMs,
    tile: o.tile,
  };
}

const WG = 256;

/** keys[2j] = fmix32(2 (base + j) + 1 + miss), keys[2j + 1] = fmix32(base + j) >> 1: unique, never reserved. */
const generateKernel: Kernel = {
  name: 'bench.hkv.keys',
  workgroupSize: WG,
  source: composeWgsl(
    /* wgsl */ `
struct Params { n: u32, base: u32, miss: u32, _p: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var j = grid_thread(wid, nwg, lid, ${WG}u); j < params.n; j += grid_threads(nwg, ${WG}u)) {
    let s = params.base + j;
    keys[2u * j] = hash_fmix32(2u * s + 1u + params.miss);
    keys[2u * j + 1u] = hash_fmix32(s) >> 1u;
  }
}`,
    { modules: [gridModule, fmix32Module] },
  ),
};

function deviceKeys(gpu: Gpu, n: number, base: number, miss: boolean): DeviceArray<'u32'> {
  const keys = gpu.createArray('u32', 2 * n, 'bench.hkv.keys');
  const params = gpu.uniforms(new Uint32Array([n, base, miss ? 1 : 0, 0]));
  gpu.dispatch(generateKernel, { bindings: [params, keys.buffer], invocations: n, maxWorkgroups: 65535 });
  gpu.pool.release(params);
  return keys;
}

/** The host twin of a key stream position. */
function hostKey(s: number): [number, number] {
  return [fmix32((2 * s + 1) >>> 0), fmix32(s >>> 0) >>> 1];
}

interface Ctx {
  gpu: Gpu;
  gather: number;
  log: (line: string) => void;
  warmupMs: number;
  /** The cooperative-group options of the throughput caches. */
  group: { subgroups?: boolean; tile?: number };
}

/** Most warm-up reps before a measurement. */
const MAX_WARMUP_REPS = 64;

/**
 * GPU times of `reps` repetitions recorded back to back in one submission after a warm-up sized
 * from one probe rep's GPU time (timestamps, not the wall clock): about `ctx.warmupMs` of GPU work,
 * at most MAX_WARMUP_REPS reps. Logs the probe, the warm-up and the wall time of each phase.
 */
async function measure(ctx: Ctx, label: string, reps: number, encodeRep: EncodeRep): Promise<Map<string, number[]>> {
  const t0 = performance.now();
  let warmup = 1;
  let probeMs = 0;
  if (ctx.warmupMs > 0) {
    const probe = await timeReps(ctx.gpu, encodeRep, { warmup: 0, reps: 1, label: `${label} (probe)` });
    probeMs = [...probe.values()].reduce((a, v) => a + (v[0] ?? 0), 0);
    warmup = Math.min(MAX_WARMUP_REPS, Math.max(1, Math.ceil(ctx.warmupMs / Math.max(probeMs, 0.01))));
  }
  const t1 = performance.now();
  const times = await timeReps(ctx.gpu, encodeRep, { warmup, reps, label });
  const t2 = performance.now();
  ctx.log(
    `  ${label}: probe ${probeMs.toFixed(2)} GPU ms (${(t1 - t0).toFixed(0)} ms wall), ${warmup} warm-up + ${reps} reps in ${(t2 - t1).toFixed(0)} ms wall`,
  );
  return times;
}

async function throughput(ctx: Ctx, o: HkvBenchOptions): Promise<HkvRow[]> {
  const { gpu } = ctx;
  const rows: HkvRow[] = [];
  const capacity = 2 ** o.capacityLog2;
  const binding = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  for (const dim of o.dims) {
    let cache: HkvCache;
    try {
      cache = await HkvCache.create(gpu, { capacity, dim, assumeUniqueKeys: true, ...ctx.group });
    } catch (error) {
      if (!(error instanceof LimitExceededError || error instanceof GpuOutOfMemoryError)) throw error;
      // More value buffers than one kernel may bind on this device, or more memory than it has:
      // reported, not measured.
      rows.push({ workload: 'throughput', operation: 'skipped', dim, ok: true, note: error.message });
      ctx.log(`throughput dim ${dim}: skipped (${error.message})`);
      continue;
    }
    try {
      const maxLoad = Math.max(...o.loads);
      const chunk = Math.min(Math.round(maxLoad * capacity), Math.floor(binding / (dim * 4)), Math.floor(binding / 8) - 4);
      const total = Math.round(maxLoad * capacity);
      const hits: DeviceArray<'u32'>[] = [];
      const misses: DeviceArray<'u32'>[] = [];
      // A find keeps every batch's answers, as a caller of one find of the whole load does: one
      // values and one flags array per batch (writing every batch into one shared array would time
      // rewrites of one binding instead). The inserts read their values from the first.
      const outValues: DeviceArray<'f32'>[] = [];
      const found: DeviceArray<'u32'>[] = [];
      let out: DeviceArray<'u32'> | undefined;
      try {
        // One operation, so that a device out of memory shows here, not as invalid buffers later.
        await gpu.run(`hkv throughput dim ${dim}: key streams and answer arrays`, async () => {
          out = gpu.createArray('u32', 2 * chunk + 4, 'bench.hkv.out');
          for (let at = 0; at < total; at += chunk) {
            hits.push(deviceKeys(gpu, Math.min(chunk, total - at), at, false));
            misses.push(deviceKeys(gpu, Math.min(chunk, total - at), at, true));
            outValues.push(gpu.createArray('f32', chunk * dim, `bench.hkv.found-values.${outValues.length}`));
            found.push(gpu.createArray('u32', chunk, `bench.hkv.found.${found.length}`));
          }
        });
      } catch (error) {
        for (const a of [...hits, ...misses, ...outValues, ...found]) a.destroy();
        out?.destroy();
        if (!(error instanceof GpuOutOfMemoryError)) throw error;
        rows.push({ workload: 'throughput', operation: 'skipped', dim, ok: true, note: error.message });
        ctx.log(`throughput dim ${dim}: skipped (${error.message})`);
        continue;
      }
      const values = outValues[0] as DeviceArray<'f32'>;
      const batchOut = out as DeviceArray<'u32'>;
      const tKeys = performance.now();
      await gpu.finish();
      ctx.log(
        `throughput dim ${dim}: cache of 2^${o.capacityLog2} slots and ${2 * hits.length} key arrays of up to ${chunk} keys ready (${(performance.now() - tKeys).toFixed(0)} ms waiting for the GPU)`,
      );
      try {
        for (const load of o.loads) {
          const n = Math.round(load * capacity);
          // The first `n` keys of the streams, chunk by chunk (a view per chunk: the chunks are whole arrays but the last).
          const parts = (arrays: DeviceArray<'u32'>[]) => {
            const list: { keys: DeviceArray<'u32'>; n: number }[] = [];
            for (let c = 0, at = 0; at < n; c++, at += chunk)
              list.push({ keys: arrays[c] as DeviceArray<'u32'>, n: Math.min(chunk, n - at) });
            return list;
          };
          const insertAll = (encoder: GPUCommandEncoder, time?: (l: string) => GPUComputePassTimestampWrites | undefined) => {
            // The whole load as one call (its batches each one binding of values at most).
            const batches = parts(hits).map((p) => ({
              keys: p.n * 2 === p.keys.length ? p.keys : wrapPrefix(p.keys, 2 * p.n),
              values: p.n * dim === values.length ? values : wrapPrefixF(values, p.n * dim),
              out: batchOut,
            }));
            encodeTimedSpan(encoder, time?.('insert'), () => cache.encodeInsertOrAssignBatches(encoder, batches));
          };
          const insertTimes = await measure(ctx, `insertOrAssign dim ${dim} load ${load}`, o.reps, (encoder, time) => {
            cache.encodeClear(encoder);
            insertAll(encoder, time);
          });
          const size = await cache.size();
          rows.push(
            row(ctx, 'throughput', 'insertOrAssign', n, samplesOf(insertTimes, 'insert'), {
              dim,
              load,
              fraction: size / n,
              ok: size <= capacity,
            }),
          );
          for (const kind of ['hit', 'miss'] as const) {
            const times = await measure(ctx, `find-${kind} dim ${dim} load ${load}`, o.reps, (encoder, time) => {
              // The whole load as one call (its batches each one binding of values at most).
              const batches = parts(kind === 'hit' ? hits : misses).map((p, c) => ({
                keys: p.n * 2 === p.keys.length ? p.keys : wrapPrefix(p.keys, 2 * p.n),
                found: found[c] as DeviceArray<'u32'>,
                values: outValues[c] as DeviceArray<'f32'>,
              }));
              encodeTimedSpan(encoder, time('find'), () => cache.encodeFindBatches(encoder, batches));
            });
            // Check the last chunk's answers: misses are never found; hits are found as often as the cache kept keys.
            const t0 = performance.now();
            const lastPart = parts(kind === 'hit' ? hits : misses).length - 1;
            const last = parts(kind === 'hit' ? hits : misses)[lastPart] as { n: number };
            const flags = await gpu.download(found[lastPart] as DeviceArray<'u32'>, last.n);
            let foundCount = 0;
            for (let i = 0; i < flags.length; i++) foundCount += flags[i] as number;
            ctx.log(
              `  find-${kind} dim ${dim} load ${load}: ${last.n} answers read back and counted in ${(performance.now() - t0).toFixed(0)} ms`,
            );
            const ok = kind === 'miss' ? foundCount === 0 : foundCount <= last.n && (load < 0.6 ? foundCount === last.n : true);
            rows.push(
              row(ctx, 'throughput', `find-${kind}`, n, samplesOf(times, 'find'), {
                dim,
                load,
                fraction: foundCount / last.n,
                ok,
                note: ok ? undefined : `${foundCount} of ${last.n} ${kind === 'miss' ? 'absent keys found' : 'inserted keys found'}`,
              }),
            );
          }
          ctx.log(`throughput dim ${dim} load ${load}: done`);
        }
      } finally {
        for (const a of [...hits, ...misses, batchOut, ...outValues, ...found]) a.destroy();
      }
    } finally {
      cache.destroy();
      // Let the device free them, and the pooled scratch (window lists), before the next dim
      // allocates: dim 64 at load 1.0 fills most of an 80 GB card.
      await gpu.finish();
      gpu.pool.clear();
    }
  }
  return rows;
}

/** The first `length` elements of a device array, as a view (not owned). */
function wrapPrefix(a: DeviceArray<'u32'>, length: number): DeviceArray<'u32'> {
  return DeviceArray.wrap(a.buffer, length, 'u32');
}
function wrapPrefixF(a: DeviceArray<'f32'>, length: number): DeviceArray<'f32'> {
  return DeviceArray.wrap(a.buffer, length, 'f32');
}

function row(ctx: Ctx, workload: string, operation: string, ops: number, samples: number[], extra: Partial<HkvRow>): HkvRow {
  const gpuMs = summarize(samples);
  const rate = gops(ops, gpuMs.median);
  return {
    workload,
    operation,
    ops,
    gpuMs,
    gops: rate,
    shareOfGather: rate !== null && ctx.gather > 0 ? (rate * 1e9) / ctx.gather : null,
    ok: true,
    ...extra,
  };
}

/** Guide-table cells of the Zipf sampler: each narrows the binary search to the ranks of one cell. */
const ZIPF_GUIDE = 1 << 23;

/**
 * Zipf(alpha) ranks over [0, universe): inverse CDF by binary search, started from a guide table
 * (the first rank of each 1/2^23 of the mass), so a sample costs a few probes of nearby ranks
 * instead of ~25 probes across the whole CDF (which took minutes for the full suite's 200M samples).
 */
export function zipfSampler(universe: number, alpha: number, seed: number): () => number {
  const cdf = new Float64Array(universe);
  let sum = 0;
  for (let r = 0; r < universe; r++) {
    sum += 1 / (r + 1) ** alpha;
    cdf[r] = sum;
  }
  const guide = new Uint32Array(ZIPF_GUIDE + 1);
  for (let g = 0, r = 0; g <= ZIPF_GUIDE; g++) {
    const u = (g / ZIPF_GUIDE) * sum;
    while (r < universe - 1 && (cdf[r] as number) < u) r++;
    guide[g] = r;
  }
  let s = seed >>> 0 || 1;
  const rand = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  return () => {
    // u = rand() * sum, as a plain inverse CDF; the first rank with cdf >= u lies in [guide[g], guide[g + 1]].
    const x = rand() * ZIPF_GUIDE;
    const g = Math.floor(x);
    const u = (x / ZIPF_GUIDE) * sum;
    let lo = guide[g] as number;
    let hi = guide[g + 1] as number;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** The hitrate workload's ratios to the capacity (the paper's Exp #3c, module comment). */
export const HITRATE = { universe: 10, batchDivisor: 128, warmup: 4, measured: 8 } as const;

async function hitrate(ctx: Ctx, o: HkvBenchOptions): Promise<HkvRow[]> {
  const rows: HkvRow[] = [];
  const capacity = 2 ** o.hitrateLog2;
  // The paper's ratios (module comment): universe 10x capacity, batches of capacity/128.
  const universe = HITRATE.universe * capacity;
  const batch = Math.max(1, capacity / HITRATE.batchDivisor);
  const warm = Math.ceil((HITRATE.warmup * capacity) / batch);
  const measured = Math.ceil((HITRATE.measured * capacity) / batch);
  for (const alpha of o.alphas) {
    const t0 = performance.now();
    const sample = zipfSampler(universe, alpha, 0x2545f491);
    // One key stream per exponent, shared by the policies.
    const stream: Uint32Array[] = [];
    for (let b = 0; b < warm + measured; b++) {
      const words = new Uint32Array(2 * batch);
      for (let i = 0; i < batch; i++) {
        const [lo, hi] = hostKey(sample());
        words[2 * i] = lo;
        words[2 * i + 1] = hi;
      }
      stream.push(words);
    }
    ctx.log(
      `hitrate alpha ${alpha}: ${stream.length} batches of ${batch} Zipf keys drawn in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    for (const policy of o.policies) {
      const cache = await HkvCache.create(ctx.gpu, { capacity, dim: 1, policy });
      try {
        const values = new Float32Array(batch);
        let hits = 0;
        let lookups = 0;
        const t0 = performance.now();
        for (let b = 0; b < stream.length; b++) {
          const keys = stream[b] as Uint32Array;
          if (policy === 'epochLru' || policy === 'epochLfu') cache.epoch = b;
          const f = await cache.find(keys);
          if (b >= warm) {
            hits += f.found.reduce((a, x) => a + x, 0);
            lookups += batch;
          }
          await cache.insertOrAssign(keys, values);
        }
        const seconds = (performance.now() - t0) / 1000;
        const load = await cache.loadFactor();
        rows.push({
          workload: 'hitrate',
          operation: 'find + insertOrAssign',
          policy,
          alpha,
          load,
          fraction: hits / lookups,
          ops: 2 * batch * stream.length,
          // Load 1.0 is the paper's regime; at alpha 1.25 a run of this length may hold fewer
          // distinct keys than fill the buckets (the hot set fits): reported, not an error.
          ok: load <= 1 && hits <= lookups,
          note: `capacity 2^${Math.log2(capacity)}, universe ${universe}, batches of ${batch}, ${warm} warm-up + ${measured} measured batches; host loop ${((2 * batch * stream.length) / seconds / 1e6).toFixed(1)} M keys/s end to end`,
        });
        ctx.log(`hitrate ${policy} alpha ${alpha}: ${((100 * hits) / lookups).toFixed(1)}%`);
      } finally {
        cache.destroy();
      }
    }
  }
  return rows;
}

async function topn(ctx: Ctx, o: HkvBenchOptions): Promise<HkvRow[]> {
  const rows: HkvRow[] = [];
  for (const mode of ['single', 'dual'] as const) rows.push(await topnOne(ctx, o, mode));
  return rows;
}

async function topnOne(ctx: Ctx, o: HkvBenchOptions, mode: 'single' | 'dual'): Promise<HkvRow> {
  const capacity = 2 ** o.topnLog2;
  // Batches of 128 keys until the first eviction (its load to 128 / capacity), then capacity/64.
  const fillBatch = Math.min(128, capacity / 64);
  const batch = capacity / 64;
  const total = 5 * capacity;
  const cache = await HkvCache.create(ctx.gpu, { capacity, dim: 1, policy: 'custom', mode });
  try {
    let s = 0x9e3779b9;
    const rand32 = () => {
      s ^= s << 13;
      s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      return s;
    };
    // Key j of the stream is hostKey(j); its score, as a double (exact to 53 bits: ties at the
    // top-N boundary are negligible for uniform 64-bit scores), for ranking on the host.
    const rank = new Float64Array(total);
    let firstEviction: number | undefined;
    const values = new Float32Array(batch);
    const keysBuffer = new Uint32Array(2 * batch);
    const scoresBuffer = new Uint32Array(2 * batch);
    for (let at = 0; at < total; ) {
      const n = Math.min(firstEviction === undefined ? fillBatch : batch, total - at);
      const keys = keysBuffer.subarray(0, 2 * n);
      const scores = scoresBuffer.subarray(0, 2 * n);
      for (let i = 0; i < n; i++) {
        const [lo, hi] = hostKey(at + i);
        keys[2 * i] = lo;
        keys[2 * i + 1] = hi;
        scores[2 * i] = rand32();
        scores[2 * i + 1] = rand32();
        rank[at + i] = (scores[2 * i + 1] as number) * 2 ** 32 + (scores[2 * i] as number);
      }
      const before = firstEviction === undefined ? await cache.size() : 0;
      const r = await cache.insertAndEvict(keys, values.subarray(0, n), scores);
      if (firstEviction === undefined && (r.evictedKeys.length > 0 || r.refused.length > 0)) firstEviction = before / capacity;
      at += n;
    }
    const threshold = Float64Array.from(rank).sort()[total - capacity] as number;
    const stored = await cache.exportBatch();
    const have = new Set(stored.keys);
    let topKept = 0;
    for (let j = 0; j < total; j++) {
      if ((rank[j] as number) < threshold) continue;
      const [lo, hi] = hostKey(j);
      if (have.has((BigInt(hi) << 32n) | BigInt(lo))) topKept++;
    }
    const kept = topKept / capacity;
    ctx.log(`topn ${mode}-bucket: first eviction at load ${firstEviction?.toFixed(3)}, top-N retention ${(100 * kept).toFixed(2)}%`);
    return {
      workload: 'topn',
      operation: `insertAndEvict, ${mode}-bucket`,
      fraction: kept,
      firstEvictionLoad: firstEviction ?? 1,
      load: stored.keys.length / capacity,
      ok: stored.keys.length <= capacity,
      note: `custom uniform scores, capacity 2^${Math.log2(capacity)}, ${total} keys in batches of ${fillBatch} until the first eviction, then ${batch}`,
    };
  } finally {
    cache.destroy();
  }
}

async function hosttier(ctx: Ctx, o: HkvBenchOptions): Promise<HkvRow[]> {
  const rows: HkvRow[] = [];
  const capacity = 2 ** (o.suite === 'full' ? 22 : 12);
  const dim = 32;
  const n = capacity / 2;
  const keys = new Uint32Array(2 * n);
  for (let i = 0; i < n; i++) {
    const [lo, hi] = hostKey(i);
    keys[2 * i] = lo;
    keys[2 * i + 1] = hi;
  }
  const values = new Float32Array(n * dim);
  for (let j = 0; j < values.length; j++) values[j] = j;
  for (const onHost of [0, 0.5, 1]) {
    const deviceBytes = Math.round((1 - onHost) * capacity) * dim * 4;
    const cache = await HkvCache.create(ctx.gpu, { capacity, dim, maxDeviceBytesForValues: deviceBytes, assumeUniqueKeys: true });
    try {
      const time = async (body: () => Promise<unknown>) => {
        const samples: number[] = [];
        for (let r = 0; r < o.reps + 1; r++) {
          await ctx.gpu.finish();
          const t0 = performance.now();
          await body();
          if (r > 0) samples.push(performance.now() - t0);
        }
        return summarize(samples);
      };
      const ins = await time(() => cache.insertOrAssign(keys, values));
      let ok = true;
      const fnd = await time(async () => {
        const f = await cache.find(keys);
        ok &&= f.found.every((x) => x === 1) && f.values[dim * (n - 1)] === dim * (n - 1);
      });
      for (const [operation, stats] of [
        ['insertOrAssign (host API)', ins],
        ['find (host API)', fnd],
      ] as const) {
        rows.push({
          workload: 'hosttier',
          operation,
          dim,
          load: 0.5,
          ops: n,
          gpuMs: stats,
          gops: gops(n, stats.median),
          fraction: onHost,
          ok,
          note: `${(100 * onHost).toFixed(0)}% of the values in host memory; wall clock, ${((n * dim * 4) / (stats.median / 1000) / 1e9).toFixed(2)} GB/s of values`,
        });
      }
      ctx.log(`hosttier ${onHost}: insert ${ins.median.toFixed(1)} ms, find ${fnd.median.toFixed(1)} ms`);
    } finally {
      cache.destroy();
    }
  }
  return rows;
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '-' : `${(100 * x).toFixed(1)}%`);

export function formatHkvRows(rows: readonly HkvRow[]): string {
  const lines = ['workload    operation                        dim  load   policy    alpha    G/s      share   fraction  ok'];
  for (const r of rows) {
    lines.push(
      [
        r.workload.padEnd(11),
        r.operation.padEnd(32),
        String(r.dim ?? '-').padStart(3),
        (r.load !== undefined ? r.load.toFixed(2) : '-').padStart(5),
        (r.policy ?? '-').padEnd(9),
        (r.alpha !== undefined ? String(r.alpha) : '-').padStart(5),
        (r.gops !== undefined && r.gops !== null ? r.gops.toPrecision(3) : '-').padStart(8),
        pct(r.shareOfGather).padStart(8),
        `${pct(r.fraction)}${r.firstEvictionLoad !== undefined ? ` (1st evict ${r.firstEvictionLoad.toFixed(3)})` : ''}`.padStart(9),
        r.ok ? (r.operation === 'skipped' ? ` skipped: ${r.note}` : ' ok') : ` WRONG${r.note ? `: ${r.note}` : ''}`,
      ].join(' '),
    );
  }
  return lines.join('\n');
}

/** Runs the HKV suite; returns the exit status (0 all ok). */
export async function runHkvBench(
  argv: readonly string[],
  io: { stdout(t: string): void; stderr(t: string): void; gpu?: Gpu; env: Record<string, string | undefined>; cwd: string },
  dawnOptions: string[],
): Promise<number> {
  let o: HkvBenchOptions | 'help';
  try {
    o = parseHkvArgs(argv);
  } catch (e) {
    io.stderr(`gpuhash-bench hkv: ${(e as Error).message}\n\n${hkvUsage()}\n`);
    return 2;
  }
  if (o === 'help') {
    io.stdout(`${hkvUsage()}\n`);
    return 0;
  }
  const options = o;
  const gpu = io.gpu ?? (await requestGpu({ allowSoftware: true, dawnOptions, log: (m) => io.stderr(`${m}\n`) }));
  try {
    const started = performance.now();
    const log = (line: string) => {
      if (!options.quiet) io.stderr(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
    };
    const warmupMs = options.warmupMs ?? (gpu.isSoftware ? 0 : 500);
    const roof = await measureRoofline(gpu, { reps: options.reps, warmup: 1, warmupMs });
    const group = options.tile === undefined ? {} : options.tile === 0 ? { subgroups: false } : { tile: options.tile };
    const ctx: Ctx = { gpu, gather: roof.gather4.opsPerSecond, log, warmupMs, group };
    log(`gpuhash-bench hkv ${options.suite}: ${gpu.describe()}; random 4-byte gather ${(roof.gather4.opsPerSecond / 1e9).toFixed(2)} G/s`);
    log(
      `limits: maxStorageBuffersPerShaderStage ${gpu.limits.maxStorageBuffersPerShaderStage}, maxStorageBufferBindingSize ${gpu.limits.maxStorageBufferBindingSize}, maxBufferSize ${gpu.limits.maxBufferSize}`,
    );
    const rows: HkvRow[] = [];
    for (const [name, run] of [
      ['throughput', throughput],
      ['hitrate', hitrate],
      ['topn', topn],
      ['hosttier', hosttier],
    ] as const) {
      if (!options.workloads.includes(name)) continue;
      const t0 = performance.now();
      log(`${name}: start`);
      rows.push(...(await run(ctx, options)));
      log(`${name}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
    io.stdout(`${formatHkvRows(rows)}\n`);
    if (options.json) {
      const { mkdirSync, writeFileSync } = await import('node:fs');
      const { dirname } = await import('node:path');
      mkdirSync(dirname(options.json), { recursive: true });
      const report = {
        suite: `hkv-${options.suite}`,
        date: new Date().toISOString(),
        git: gitInfo(undefined, io.env, io.cwd),
        device: describeDevice(gpu, dawnOptions),
        capacityLog2: options.capacityLog2,
        roofline: { gather4PerSecond: roof.gather4.opsPerSecond },
        rows,
      };
      writeFileSync(options.json, `${JSON.stringify(report, null, 2)}\n`);
      io.stdout(`wrote ${options.json}\n`);
    }
    return rows.every((r) => r.ok) ? 0 : 1;
  } finally {
    if (!io.gpu) gpu.destroy();
  }
}
