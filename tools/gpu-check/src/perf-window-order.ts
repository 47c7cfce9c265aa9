/**
 * Linear-probe finds over more than 2 GiB of slots, in window order (the default there) and in
 * batch order: the order's passes (count, scan, scatter) alone, then each find in full, alternated
 * twice, GPU time of back-to-back passes in one submission (median of 5, clocks warmed up first).
 * Keys fmix32(2j + 1), values j, at most 2^28 - 1 of them (LOAD of the table, capped there);
 * every answer is checked.
 *   node perf-window-order.mjs [log2Capacity=29] [load=0.5]
 */
import { requestGpu } from '@gpuhash/core';
import { fmix32 } from '@gpuhash/kernels';
import { LinearProbeTable } from '@gpuhash/linear-probe';
import { clockWarmup } from './clock-warmup';

const log = Number(process.argv[2] ?? 29);
const capacity = 2 ** log;
const n = Math.min(Math.floor(capacity * Number(process.argv[3] ?? 0.5)), 2 ** 28 - 1);
const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}; capacity 2^${log}, ${n} keys (load ${(n / capacity).toFixed(3)})`);
const warm = clockWarmup(gpu);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const keys = new Uint32Array(n);
for (let j = 0; j < n; j++) keys[j] = fmix32(2 * j + 1);
const keysBuffer = gpu.upload(keys).buffer;
const valuesBuffer = gpu.upload(Uint32Array.from({ length: n }, (_, j) => j)).buffer;
const outValues = gpu.createBuffer(n * 4, 'perf-window-order.values');
const outFound = gpu.createBuffer(n * 4, 'perf-window-order.found');

/** `reps` timed encodes after one untimed, in one submission. */
async function time(label: string, encode: (enc: GPUCommandEncoder, ts?: GPUComputePassTimestampWrites) => void): Promise<void> {
  const reps = 5;
  const timer = gpu.createTimer(reps);
  const enc = gpu.device.createCommandEncoder();
  warm(enc);
  encode(enc);
  for (let r = 0; r < reps; r++) encode(enc, timer.slot(`${label}#${r}`));
  timer.resolve(enc);
  gpu.submit([enc.finish()]);
  timer.submitted();
  const ms = median((await timer.read()).passes.map((p) => p.ms));
  timer.destroy();
  console.log(`${label.padEnd(36)} ${ms.toFixed(3)} ms  ${(n / ms / 1e6).toFixed(2)} G/s`);
}

async function expectAllFound(): Promise<void> {
  const found = new Uint32Array(await gpu.readBytes(outFound, 0, n * 4));
  const values = new Uint32Array(await gpu.readBytes(outValues, 0, n * 4));
  let wrong = 0;
  for (let j = 0; j < n; j++) if (found[j] !== 1 || values[j] !== j) wrong++;
  if (wrong > 0) throw new Error(`${wrong} of ${n} answers wrong`);
}

const tables = await Promise.all(
  (['auto', 'never'] as const).map(async (windowOrder) => {
    const table = await LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: capacity, windowOrder });
    const enc = gpu.device.createCommandEncoder();
    table.encodeInsert(enc, keysBuffer, valuesBuffer, n);
    gpu.submit([enc.finish()]);
    return { windowOrder, table };
  }),
);
// The order's passes by themselves (the engine's own method; not part of the public API).
const ordered = tables[0]?.table as LinearProbeTable;
const engine = (ordered as unknown as { engine: { encodeWindowOrder(e: GPUCommandEncoder, k: GPUBuffer, n: number): unknown } }).engine;
for (const round of [1, 2]) {
  await time(`order passes (round ${round})`, (enc, ts) => {
    if (ts)
      enc.beginComputePass({ timestampWrites: { querySet: ts.querySet, beginningOfPassWriteIndex: ts.beginningOfPassWriteIndex } }).end();
    engine.encodeWindowOrder(enc, keysBuffer, n);
    if (ts) enc.beginComputePass({ timestampWrites: { querySet: ts.querySet, endOfPassWriteIndex: ts.endOfPassWriteIndex } }).end();
  });
  for (const { windowOrder, table } of tables) {
    await time(`find, windowOrder ${windowOrder} (round ${round})`, (enc, ts) =>
      table.encodeFind(enc, keysBuffer, n, outValues, outFound, ts),
    );
    await expectAllFound();
  }
}
for (const { table } of tables) table.destroy();
