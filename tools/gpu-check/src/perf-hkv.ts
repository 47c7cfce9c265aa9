/**
 * HierarchicalKV's passes, one by one, on caches of growing size: insertOrAssign of the whole load
 * from empty (its update and insert passes timed apart), find of every inserted key and of as many
 * absent ones, dim 1, LRU, unique keys. GPU timestamps, median of the reps; a progress line per step
 * so a slow pass shows where it is.
 *   node perf-hkv.mjs [log2 capacities, comma-separated] [loads] [dims]
 * A load above 1 inserts that many times the capacity from empty: the keys past a full bucket evict
 * (load 2: the second half of the keys, a full cache's steady state).
 * Env: REPS (default 3), GATHER (G/s, for shares), TILES (comma-separated lanes per cooperative
 * group, 0 = one invocation per key; default the cache's choice), WALL=1 (also time each rep as its
 * own submission, submit to completion), BATCH (keys per batch; default
 * as many as one binding of values holds), VALUE_BUFFER_MB (largest value buffer; default the binding
 * limit), WINDOW_MB (values one pass touches; default the cache's), PER_BATCH=1 (inserts and finds
 * batch by batch, encodeInsertOrAssign and encodeFind, instead of one encodeInsertOrAssignBatches
 * and one encodeFindBatches), SPAN=1 (time each operation from before its first command to after
 * its last, as the bench does, instead of pass by pass: a timestamp on every pass costs about 8 us
 * on an H100, perf-passes), OUTS=1 (each find batch writes its own values array instead of one
 * shared by all).
 */

import { DeviceArray, encodeTimedSpan, type GpuTimer, requestGpu } from '@gpuhash/core';
import { HkvCache } from '@gpuhash/hkv';

const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}`);
console.log(
  `limits: maxStorageBuffersPerShaderStage ${gpu.limits.maxStorageBuffersPerShaderStage}, maxStorageBufferBindingSize ${gpu.limits.maxStorageBufferBindingSize}, maxBufferSize ${gpu.limits.maxBufferSize}`,
);
const logs = (process.argv[2] ?? (gpu.isSoftware ? '12,14' : '20,22,24,27')).split(',').map(Number);
const loads = (process.argv[3] ?? '0.5,1.0').split(',').map(Number);
const dims = (process.argv[4] ?? '1').split(',').map(Number);
const reps = Number(process.env.REPS ?? 3);
const gather = Number(process.env.GATHER ?? 0);
const tiles: (number | undefined)[] = process.env.TILES ? process.env.TILES.split(',').map(Number) : [undefined];
const wall = process.env.WALL === '1';
const batchKeys = Number(process.env.BATCH ?? 0);
const perBatch = process.env.PER_BATCH === '1';
const span = process.env.SPAN === '1';
let lastWall = 0;
const wallNote = () => (wall ? ` (wall ${lastWall.toFixed(2)} ms)` : '');
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number;
const t0 = performance.now();
const stamp = () => `${((performance.now() - t0) / 1000).toFixed(1)}s`;

/** Median GPU ms per pass label over `reps` reps recorded in one submission (after one untimed rep). */
async function timePasses(encode: (enc: GPUCommandEncoder, time?: (l: string) => GPUComputePassTimestampWrites | undefined) => void) {
  // A query set holds at most 4096 timestamps (2048 passes): a timer per rep.
  const timers = Array.from({ length: reps }, () => gpu.createTimer(2048));
  const enc = gpu.device.createCommandEncoder();
  encode(enc);
  const labels: string[][] = timers.map(() => []);
  for (let r = 0; r < reps; r++) {
    const timer = timers[r] as GpuTimer;
    const mine = labels[r] as string[];
    if (span) {
      // One timestamp before the operation's first command and one after its last.
      mine.push('span');
      encodeTimedSpan(enc, timer.slot('span'), () => encode(enc));
    } else {
      encode(enc, (l) => {
        mine.push(l);
        return timer.slot(l);
      });
    }
  }
  for (const timer of timers) timer.resolve(enc);
  gpu.submit([enc.finish()]);
  for (const timer of timers) timer.submitted();
  const per = new Map<string, number[]>();
  for (let r = 0; r < reps; r++) {
    const timer = timers[r] as GpuTimer;
    const t = await timer.read();
    timer.destroy();
    t.passes.forEach((p, i) => {
      const key = (labels[r] as string[])[i] as string;
      const list = per.get(key) ?? [];
      list[r] = (list[r] ?? 0) + p.ms;
      per.set(key, list);
    });
  }
  if (wall) {
    const walls: number[] = [];
    for (let r = 0; r < reps; r++) {
      const e = gpu.device.createCommandEncoder();
      encode(e);
      const start = performance.now();
      gpu.submit([e.finish()]);
      await gpu.device.queue.onSubmittedWorkDone();
      walls.push(performance.now() - start);
    }
    lastWall = median(walls);
  }
  return new Map([...per].map(([k, v]) => [k, median(v.filter((x) => x !== undefined))]));
}

/** Keys `from .. from + n - 1` of the stream. */
function keysOf(from: number, n: number, miss: boolean): DeviceArray<'u32'> {
  const a = new Uint32Array(2 * n);
  for (let t = 0; t < n; t++) {
    const j = from + t;
    // Unique, never reserved: (lo, hi) = (j * odd + miss, j >> 31 | 0x1000).
    const x = Math.imul(2 * j + 1 + (miss ? 1 : 0), 0x9e3779b1) >>> 0;
    a[2 * t] = x;
    a[2 * t + 1] = ((j >>> 20) ^ 0x5bd1e995 ^ (miss ? 0x80000000 : 0)) >>> 0;
  }
  return gpu.upload(a);
}

const rate = (n: number, ms: number) =>
  `${(n / ms / 1e6).toFixed(2)} G/s${gather > 0 ? ` (${((100 * n) / ms / 1e6 / gather).toFixed(1)}%)` : ''}`;

for (const tile of tiles)
  for (const dim of dims)
    for (const log2 of logs) {
      const capacity = 2 ** log2;
      const group = tile === undefined ? {} : tile === 0 ? { subgroups: false } : { tile };
      const valueMb = Number(process.env.VALUE_BUFFER_MB ?? 0);
      const windowMb = Number(process.env.WINDOW_MB ?? 0);
      const split = {
        ...(valueMb > 0 ? { maxValueBufferBytes: valueMb * 2 ** 20 } : {}),
        ...(windowMb > 0 ? { valueWindowBytes: windowMb * 2 ** 20 } : {}),
      };
      const cache = await HkvCache.create(gpu, { capacity, dim, assumeUniqueKeys: true, ...group, ...split });
      if (tile !== undefined) console.log(`tile ${tile === 0 ? 'none (one invocation per key)' : tile}`);
      const nMax = Math.round(Math.max(...loads) * capacity);
      // Batches of at most one binding of values (dims 32 and 64 at 2^27), encoded back to back.
      const binding = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
      const chunk = Math.min(nMax, Math.floor(binding / (dim * 4)), Math.floor(binding / 8) - 4, batchKeys > 0 ? batchKeys : nMax);
      const hits: DeviceArray<'u32'>[] = [];
      const misses: DeviceArray<'u32'>[] = [];
      for (let at = 0; at < nMax; at += chunk) {
        hits.push(keysOf(at, Math.min(chunk, nMax - at), false));
        misses.push(keysOf(at, Math.min(chunk, nMax - at), true));
      }
      // OUTS=1: each find batch writes its own values array (as a user keeping every answer does);
      // otherwise they all share one. The inserts read their values from the first array either
      // way: two 2 GiB arrays fewer at dim 64, whose load 1.0 with an array per batch fills most
      // of an 80 GB card.
      const ownOutputs = process.env.OUTS === '1' ? hits.map(() => gpu.createArray('f32', chunk * dim)) : [];
      const outValues = ownOutputs[0] ?? gpu.createArray('f32', chunk * dim);
      const out = gpu.createArray('u32', 2 * chunk + 4);
      const found = gpu.createArray('u32', chunk);
      console.log(
        `[${stamp()}] 2^${log2} dim ${dim}: arrays ready (${hits.length} batches of up to ${chunk} keys; ${cache.valueSplit.slices} value buffers, ${cache.valueSplit.windows} windows)`,
      );
      for (const load of loads) {
        const n = Math.round(load * capacity);
        const parts = (arrays: DeviceArray<'u32'>[]) => {
          const list: { keys: DeviceArray<'u32'>; n: number }[] = [];
          for (let c = 0, at = 0; at < n; c++, at += chunk) {
            const m = Math.min(chunk, n - at);
            list.push({ keys: DeviceArray.wrap((arrays[c] as DeviceArray<'u32'>).buffer, 2 * m, 'u32'), n: m });
          }
          return list;
        };
        const ins = await timePasses((enc, time) => {
          cache.encodeClear(enc);
          // One call for every batch (each window's copies run once for a group of them), or with
          // PER_BATCH=1 one encodeInsertOrAssign per batch.
          const batches = parts(hits).map((p) => ({ keys: p.keys, values: DeviceArray.wrap(outValues.buffer, p.n * dim, 'f32'), out }));
          if (perBatch) for (const b of batches) cache.encodeInsertOrAssign(enc, b, time);
          else cache.encodeInsertOrAssignBatches(enc, batches, time);
        });
        const size = await cache.size();
        const total = [...ins.values()].reduce((a, b) => a + b, 0);
        console.log(
          `[${stamp()}] 2^${log2} dim ${dim} load ${load}: insertOrAssign ${total.toFixed(2)} ms ${rate(n, total)} [${[...ins].map(([l, ms]) => `${l} ${ms.toFixed(2)}`).join(', ')}] kept ${((100 * size) / n).toFixed(2)}%${wallNote()}`,
        );
        for (const [kind, q] of [
          ['hit', hits],
          ['miss', misses],
        ] as const) {
          const f = await timePasses((enc, time) => {
            // One call for every batch (each window's copies run once for all of them), or with
            // PER_BATCH=1 one encodeFind per batch.
            const batches = parts(q).map((p, c) => ({ keys: p.keys, found, values: ownOutputs[c] ?? outValues }));
            if (perBatch) for (const b of batches) cache.encodeFind(enc, b.keys, b, time);
            else cache.encodeFindBatches(enc, batches, time);
          });
          const ms = [...f.values()].reduce((a, b) => a + b, 0);
          const passes = f.size > 1 ? ` [${[...f].map(([l, t]) => `${l} ${t.toFixed(2)}`).join(', ')}]` : '';
          console.log(
            `[${stamp()}] 2^${log2} dim ${dim} load ${load}: find-${kind} ${ms.toFixed(2)} ms ${rate(n, ms)}${passes}${wallNote()}`,
          );
        }
      }
      for (const a of new Set([...hits, ...misses, ...ownOutputs, out, found, outValues])) a.destroy();
      cache.destroy();
      // Freed before the next dim or size allocates, pooled scratch too.
      await gpu.finish();
      gpu.pool.clear();
    }
process.exit(0);
