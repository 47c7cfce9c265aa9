/**
 * Where a Horton insert batch spends its time: the fast pass, the spill passes and the locked
 * rounds, each stage in its own submission (wall-clock ms, so a breakdown rather than a rate), with
 * the keys still queued after each; then the whole batch as one timed submission (GPU timestamps).
 * Builds from empty to each load, keys fmix32(2j + 1) as apps/bench.
 *   node perf-horton.mjs [log2 capacity] [loads] [modes]
 */

import { requestGpu } from '@gpuhash/core';
import { type HortonMode, HortonTable } from '@gpuhash/horton';
import { fmix32 } from '@gpuhash/kernels';
import {
  bucketCountFor,
  ENTRIES,
  ENTRY_BITS,
  FUNCTIONS,
  primaryBucket,
  secondaryBucket,
  tagOf,
} from '../../../packages/horton/src/geometry';
import { clockWarmup } from './clock-warmup';

const gpu = await requestGpu({ allowSoftware: true });
// Half a second of arithmetic before every timed cut, in its submission (clock-warmup.ts).
const warm = clockWarmup(gpu);
console.log(`device: ${gpu.describe()}`);
const log2 = Number(process.argv[2] ?? (gpu.isSoftware ? 14 : 27));
const loads = (process.argv[3] ?? '0.5,0.9').split(',').map(Number);
const modes = (process.argv[4] ?? 'horton,bcht').split(',') as HortonMode[];
const capacity = 2 ** log2;
const nMax = Math.floor(Math.max(...loads) * capacity);
const keys = new Uint32Array(nMax);
for (let j = 0, i = 0; i < nMax; j++) {
  const k = fmix32(2 * j + 1);
  if (k < 0xfffffffd) keys[i++] = k;
}
const dk = gpu.upload(keys);

type Profiled = {
  readonly seed: number;
  refresh(): Promise<{ count: number; failed: Uint32Array; contended: Uint32Array }>;
  profileInsert(k: GPUBuffer, v: GPUBuffer, n: number): Promise<Array<{ stage: string; ms: number; queued: number }>>;
  profileRounds(
    k: GPUBuffer,
    v: GPUBuffer,
    n: number,
    prelude?: (e: GPUCommandEncoder) => void,
  ): Promise<{ stages: Array<{ stage: string; gpuMs: number; queued: number }>; samples: Uint32Array[] }>;
  profileCut(
    k: GPUBuffer,
    v: GPUBuffer,
    n: number,
    spill: boolean,
    rounds: number,
    prelude?: (e: GPUCommandEncoder) => void,
  ): Promise<{ ms: number; gpuMs: number; queued: number }>;
};

// BUILDS=k: k device-side builds per load instead of the profile, each checked: the keys reported
// failed, and the keys a find misses (which must be exactly those).
const builds = Number(process.env.BUILDS ?? 0);
// TRACE=k: k whole builds per load in one submission each, GPU time and queued keys round by round.
const traces = Number(process.env.TRACE ?? 0);

const REMAP = 0xfffffffe;
const EMPTY = 0xffffffff;
/** DIAG=1 (with BUILDS): each key a build left unplaced, its primary bucket and its candidates. */
async function diagnose(table: HortonTable, failed: Uint32Array, n: number): Promise<void> {
  const store = (table as unknown as { engine: { store: { buckets: GPUBuffer; bucketCount: number; seed: number } } }).engine.store;
  const words = new Uint32Array(await gpu.readBytes(store.buckets, 0, store.bucketCount * 64));
  const mask = store.bucketCount - 1;
  const seed = store.seed;
  const at = (b: number, s: number) => words[16 * b + 2 * s] as number;
  const isB = (b: number) => at(b, 7) === REMAP;
  const room = (b: number) => [0, 1, 2, 3, 4, 5, 6, 7].filter((s) => at(b, s) === EMPTY).length;
  const entryOf = (b: number, t: number) => (isB(b) ? ((words[16 * b + 15] as number) >>> (ENTRY_BITS * t)) & ((1 << ENTRY_BITS) - 1) : 0);
  const describe = (b: number) => {
    const slots = [0, 1, 2, 3, 4, 5, 6, 7].map((s) => {
      const k = at(b, s);
      if (k === EMPTY) return '_';
      if (k === REMAP) return 'R';
      const p = primaryBucket(k, mask, seed);
      return p === b ? `P${tagOf(k, seed)}` : `S(${p % 100000}:${tagOf(k, seed)})`;
    });
    return `${b}${isB(b) ? 'B' : 'A'}[${slots.join(' ')}] room ${room(b)}`;
  };
  for (const i of failed.slice(0, 4)) {
    const k = (i < n ? keys[i] : 0) as number;
    const x = primaryBucket(k, mask, seed);
    const t = tagOf(k, seed);
    const e = entryOf(x, t);
    console.log(`  key #${i} ${k}: x ${describe(x)}, tag ${t}, entry ${e}${e ? `, z ${describe(secondaryBucket(x, t, e, mask))}` : ''}`);
    const cands = [];
    for (let f = 1; f <= FUNCTIONS; f++) cands.push(`${f}: ${describe(secondaryBucket(x, t, f, mask))}`);
    console.log(`    candidates ${cands.join('; ')}`);
    const rea = isB(x) ? [...Array(ENTRIES).keys()].map((u) => entryOf(x, u)).join('') : '-';
    console.log(`    x entries ${rea}`);
  }
}

for (const mode of modes) {
  const table = await HortonTable.create(gpu, { capacity, growth: false, mode });
  table.reserveBatch(nMax);
  const engine = (table as unknown as { engine: Profiled }).engine;
  for (const load of builds > 0 ? loads : []) {
    const n = Math.floor(load * capacity);
    const found = gpu.createArray('u32', n);
    const values = gpu.createArray('u32', n);
    for (let b = 0; b < builds; b++) {
      await table.clear();
      const enc = gpu.device.createCommandEncoder();
      table.encodeInsert(enc, dk.buffer, dk.buffer, n);
      table.encodeFind(enc, dk.buffer, n, values.buffer, found.buffer);
      gpu.submit([enc.finish()]);
      const report = await engine.refresh();
      const f = (await gpu.download(found)) as Uint32Array;
      let missing = 0;
      for (let i = 0; i < n; i++) if (f[i] === 0) missing++;
      const failed = new Set(report.failed);
      let missingNotReported = 0;
      for (let i = 0; i < n; i++) if (f[i] === 0 && !failed.has(i)) missingNotReported++;
      if (process.env.DIAG && report.failed.length > 0) await diagnose(table, report.failed, n);
      console.log(
        `${mode} 2^${log2} load ${load} build ${b}: size ${table.size} of ${n}; reported failed ${report.count} (contended ${report.contended.length}); find misses ${missing}, of which not reported ${missingNotReported}; primary keys pushed out ${table.primaryPushes}`,
      );
    }
    found.destroy();
    values.destroy();
  }
  for (const load of traces > 0 ? loads : []) {
    const n = Math.floor(load * capacity);
    for (let b = 0; b < traces; b++) {
      await table.clear();
      const { stages, samples } = await engine.profileRounds(dk.buffer, dk.buffer, n, warm);
      // How many distinct primary buckets the queued keys have (the first 65536 of each round's
      // queue): keys of one primary bucket each need to own it, one per round.
      const mask = bucketCountFor(capacity) - 1;
      const distinct = samples.map(
        (sample) => `${new Set(Array.from(sample, (i) => primaryBucket(keys[i] as number, mask, engine.seed))).size}/${sample.length}`,
      );
      console.log(
        `${mode} 2^${log2} load ${load} trace ${b}: distinct primary buckets of the queued keys, rounds 1-8: ${distinct.join(' ')}`,
      );
      // The bulk build's parts are timed inside the first stage, the spill passes inside 'spill'.
      const total = stages.filter((x) => !/^(bulk|spill)\./.test(x.stage)).reduce((s, x) => s + x.gpuMs, 0);
      // Rounds with nothing queued are summed into one entry.
      const idle = stages.filter((x) => x.stage.startsWith('round') && x.queued === 0);
      const shown = stages.filter((x) => !(x.stage.startsWith('round') && x.queued === 0));
      console.log(
        `${mode} 2^${log2} load ${load} trace ${b}: total ${total.toFixed(2)} ms, size ${table.size} of ${n}; ${shown
          .map((x) => `${x.stage} ${x.gpuMs.toFixed(3)} ms (${x.queued} in)`)
          .join('; ')}; ${idle.length} empty rounds ${idle.reduce((s, x) => s + x.gpuMs, 0).toFixed(3)} ms`,
      );
    }
  }
  for (const load of builds > 0 || traces > 0 ? [] : loads) {
    const n = Math.floor(load * capacity);
    await table.clear();
    const stages = await engine.profileInsert(dk.buffer, dk.buffer, n);
    const size = table.size;
    console.log(
      `${mode} 2^${log2} load ${load}: ${stages.map((s) => `${s.stage} ${s.ms.toFixed(2)} ms (${s.queued} left)`).join('; ')}; size ${size} of ${n}`,
    );
    await table.clear();
    const timer = gpu.createTimer(4);
    const enc = gpu.device.createCommandEncoder();
    table.encodeInsert(enc, dk.buffer, dk.buffer, n, { timestampWrites: timer.slot('insert') });
    timer.resolve(enc);
    gpu.submit([enc.finish()]);
    timer.submitted();
    const t = await timer.read();
    timer.destroy();
    const ms = t.passes[0]?.ms ?? Number.NaN;
    console.log(
      `${mode} 2^${log2} load ${load}: one submission ${ms.toFixed(2)} ms = ${(n / ms / 1e6).toFixed(2)} G/s, size ${table.size}`,
    );
    // The same submission cut after each stage (wall clock, from empty, the GPU kept busy before).
    const cuts: string[] = [];
    for (const [spill, rounds] of [
      [false, 0],
      [true, 0],
      [true, 1],
      [true, 2],
      [true, 4],
      [true, 8],
      [true, 16],
      [true, 32],
      [true, 96],
    ] as const) {
      await table.clear();
      const c = await engine.profileCut(dk.buffer, dk.buffer, n, spill, rounds, warm);
      cuts.push(
        `${spill ? 'first+spill' : 'first'}${rounds ? `+${rounds} rounds` : ''} GPU ${c.gpuMs.toFixed(2)} ms, wall ${c.ms.toFixed(2)} ms (${c.queued} left)`,
      );
    }
    console.log(`${mode} 2^${log2} load ${load}: cut after: ${cuts.join('; ')}`);
  }
  table.destroy();
}
process.exit(0);
