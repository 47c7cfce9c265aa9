/**
 * SlabHash's kernels in variants, on one table size: the bucket counts of the SlabHash library's
 * own measurement (0.9 x 2^27 keys, 10 and 60 keys per bucket) and cooperative groups of 16, 8
 * 4 and 2 lanes (and groups of one, without subgroups). Times insert (from empty), find-hit and
 * find-miss, GPU timestamps, median of 5, beside the random 4-byte gather.
 *   node perf-slab.mjs [log2 capacity]
 */

import { requestGpu } from '@gpuhash/core';
import { fmix32 } from '@gpuhash/kernels';
import { SlabHashMap } from '@gpuhash/slab';

const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}`);
const log2 = Number(process.argv[2] ?? (gpu.isSoftware ? 16 : 27));
const capacity = 2 ** log2;
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number;

async function timePasses(
  reps: number,
  encode: (enc: GPUCommandEncoder, ts: GPUComputePassTimestampWrites | undefined) => void,
): Promise<number> {
  const timer = gpu.createTimer(2 * reps + 2);
  const enc = gpu.device.createCommandEncoder();
  encode(enc, undefined);
  for (let r = 0; r < reps; r++) encode(enc, timer.slot(`#${r}`));
  timer.resolve(enc);
  gpu.submit([enc.finish()]);
  timer.submitted();
  const t = await timer.read();
  timer.destroy();
  return median(t.passes.map((p) => p.ms));
}

const n = Math.floor(0.9 * capacity);
const keys = new Uint32Array(n);
const misses = new Uint32Array(n);
for (let j = 0, i = 0; i < n; j++) {
  const k = fmix32(2 * j + 1);
  if (k < 0xfffffffd) keys[i++] = k;
}
for (let j = 0, i = 0; i < n; j++) {
  const k = fmix32(2 * j + 2);
  if (k < 0xfffffffd) misses[i++] = k;
}
const dk = gpu.upload(keys);
const dm = gpu.upload(misses);
const dv = gpu.upload(keys);
const outV = gpu.createArray('u32', n);
const outF = gpu.createArray('u32', n);
const gatherRate = Number(process.env.GATHER ?? 0);
const rate = (ms: number) => n / ms / 1e6;
const share = (g: number) => (gatherRate > 0 ? ` (${((100 * g) / gatherRate).toFixed(1)}%)` : '');

const variants: Array<{ name: string; subgroups: boolean; tile: number }> = [
  { name: 'tile 16', subgroups: true, tile: 16 },
  { name: 'tile 8', subgroups: true, tile: 8 },
  { name: 'tile 4', subgroups: true, tile: 4 },
  { name: 'tile 2', subgroups: true, tile: 2 },
  { name: 'no subgroups (groups of one)', subgroups: false, tile: 1 },
];
for (const perBucket of [10, 60]) {
  for (const v of variants) {
    if (v.subgroups && !gpu.subgroups.supported) continue;
    const buckets = Math.ceil(n / perBucket);
    const table = await SlabHashMap.create(gpu, {
      capacity: Math.ceil(0.99 * capacity),
      buckets,
      growth: false,
      subgroups: v.subgroups,
      tile: v.tile,
    });
    table.reserveBatch(n);
    const ins = await timePasses(5, (enc, ts) => {
      table.encodeClear(enc);
      table.encodeInsert(enc, dk.buffer, dv.buffer, n, { timestampWrites: ts });
    });
    const { size } = await table.sync();
    const hit = await timePasses(5, (enc, ts) => table.encodeFind(enc, dk.buffer, n, outV.buffer, outF.buffer, ts));
    const found = await gpu.download(outF);
    const miss = await timePasses(5, (enc, ts) => table.encodeFind(enc, dm.buffer, n, outV.buffer, outF.buffer, ts));
    const stats = await table.stats();
    const bad = found.reduce((c, f) => c + (f === 1 ? 0 : 1), 0);
    console.log(
      `${perBucket} keys/bucket (${buckets} buckets, utilization ${stats.slabUtilization.toFixed(2)}), ${v.name}: ` +
        `insert ${rate(ins).toFixed(2)}${share(rate(ins))} hit ${rate(hit).toFixed(2)}${share(rate(hit))} miss ${rate(miss).toFixed(2)}${share(rate(miss))} G/s; ` +
        `size ${size}/${n}, ${bad} hits not found, chains avg ${stats.averageChainLength.toFixed(2)} max ${stats.maxChainLength}`,
    );
    table.destroy();
  }
}
