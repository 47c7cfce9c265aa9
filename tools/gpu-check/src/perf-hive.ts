/**
 * Where a Hive batch spends its time: builds a table of 2^LOG slots to loads 0.5 and 0.95 (LOAD)
 * in one insert batch each (batches of at most 2^28 keys, each timed on its own), then runs a
 * 0.5:0.3:0.2 insert:find:erase batch of 2^22 ops at that load, printing each kernel's GPU time
 * (timestamps around every pass) and the table's stats after each step; then rebuilds and reruns
 * the mixed batch with 32 and 4 lanes per locked-pass op, and last runs the mixed batch at load
 * 0.5 twice. The clock ramps during the first steps: compare passes measured late in the run.
 *   [BULK=never|always] [MIXED=0] [LOAD=0.95] [BATCH=28] [MIXLOG=22] [UPSERTS=1] node perf-hive.mjs [log2Capacity=27]
 */
import { requestGpu } from '@gpuhash/core';
import { HiveTable, Op } from '@gpuhash/hive';
import { fmix32 } from '@gpuhash/kernels';
import { clockWarmup } from './clock-warmup';

const log = Number(process.argv[2] ?? 27);
const capacity = 2 ** log;
const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}; capacity 2^${log}`);

// BULK=never|always: the insert path (default 'auto'); MIXED=0 stops after the builds and finds.
const bulkInsert = process.env.BULK === 'never' || process.env.BULK === 'always' ? process.env.BULK : 'auto';
const table = await HiveTable.create(gpu, { capacity, growth: false, bulkInsert });
table.reserveBatch(capacity);
// The dispatcher's profiling hook (not public API): timestamps around every pass.
const d = table.dispatcher;

const reserved = (k: number) => k >= 0xfffffffe;
function keysFrom(start: number, n: number, odd: boolean): Uint32Array {
  const out = new Uint32Array(n);
  for (let j = start, i = 0; i < n; j++) {
    const k = fmix32(2 * j + (odd ? 1 : 2));
    if (!reserved(k)) out[i++] = k;
  }
  return out;
}

// Half a second of arithmetic before every profiled step, in its submission (clock-warmup.ts).
const warm = clockWarmup(gpu);

async function profiled(label: string, encode: (enc: GPUCommandEncoder) => void): Promise<void> {
  const timer = gpu.createTimer(1024);
  const enc = gpu.device.createCommandEncoder();
  warm(enc);
  d.profile = (k) => timer.slot(k);
  encode(enc);
  timer.resolve(enc);
  gpu.submit([enc.finish()]);
  timer.submitted();
  const t = await timer.read();
  d.profile = undefined;
  timer.destroy();
  const per = new Map<string, { ms: number; n: number }>();
  for (const p of t.passes) {
    const e = per.get(p.label) ?? { ms: 0, n: 0 };
    e.ms += p.ms;
    e.n++;
    per.set(p.label, e);
  }
  const total = [...per.values()].reduce((a, e) => a + e.ms, 0);
  console.log(`${label}: ${total.toFixed(2)} ms GPU`);
  for (const [k, e] of per) console.log(`  ${k.padEnd(24)} ${e.ms.toFixed(3)} ms in ${e.n} passes`);
  const s = await table.stats();
  console.log(`  stats: ${JSON.stringify(s)}`);
}

const high = Number(process.env.LOAD ?? 0.95);
const half = Math.floor(capacity * 0.5);
const full = Math.floor(capacity * high);
const all = keysFrom(0, full, true);
// Batches of at most 2^28 keys (the bench's key buffers; one binding holds 2^29 - 1 u32 words),
// or BATCH (log2) to cut a small table's batches as a large table's are cut.
const BATCH = 2 ** Number(process.env.BATCH ?? 28);
const f = gpu.createArray('u32', Math.min(full, BATCH));
const g = gpu.createArray('u32', Math.min(full, BATCH));
/** Keys [from, to) of `keys`, batch by batch, each profiled on its own. */
async function inBatches(
  label: string,
  keys: Uint32Array,
  encode: (enc: GPUCommandEncoder, b: GPUBuffer, n: number) => void,
): Promise<void> {
  const count = Math.ceil(keys.length / BATCH);
  for (let k = 0; k < count; k++) {
    const part = gpu.upload(keys.subarray(k * BATCH, Math.min(keys.length, (k + 1) * BATCH)));
    await profiled(count === 1 ? label : `${label} [batch ${k + 1} of ${count}]`, (enc) => encode(enc, part.buffer, part.length));
    part.destroy();
  }
}
const insert = (enc: GPUCommandEncoder, b: GPUBuffer, n: number) => table.encodeInsert(enc, b, b, n);
const find = (enc: GPUCommandEncoder, b: GPUBuffer, n: number) => table.encodeFind(enc, b, n, f.buffer, g.buffer);
await inBatches('insert to 0.5', all.subarray(0, half), insert);
await inBatches('find hits at 0.5', all.subarray(0, half), find);
await inBatches('find misses at 0.5', keysFrom(0, half, false), find);
// The same keys again: every insert finds its key in the scan, so this is pass A without claims.
await inBatches('insert the same keys again (all present)', all.subarray(0, half), insert);
await inBatches(`insert 0.5 to ${high}`, all.subarray(half), insert);
await inBatches(`find all (hits) at ${high}`, all, find);
await inBatches(`find misses at ${high}`, keysFrom(0, full, false), find);

if (process.env.MIXED === '0') process.exit(0);
const k1 = gpu.upload(all.subarray(0, half));

// Mixed batch: half new keys (UPSERTS=1: insertOrAssigns of present keys), 0.3 finds and 0.2
// erases of present keys (the first `present` of all).
const upserts = process.env.UPSERTS === '1';
// 2^22 ops at 2^27 slots; MIXLOG (log2) sets it, by default 2^22 or 1/32 of a smaller table.
const m = 2 ** Number(process.env.MIXLOG ?? Math.min(22, log - 5));
const fresh = keysFrom(full + 10, m, true);
function mixedBatch(present: number) {
  const ops = new Uint32Array(m);
  const mk = new Uint32Array(m);
  for (let i = 0; i < m; i++) {
    const r = (fmix32(i ^ 0x5bd1e995) % 10) as number;
    if (r < 5 && upserts) {
      ops[i] = Op.insertOrAssign;
      mk[i] = all[(fmix32(i ^ 0x9e3779b9) % present) >>> 0] as number;
    } else if (r < 5) {
      ops[i] = Op.insert;
      mk[i] = fresh[i] as number;
    } else {
      ops[i] = r < 8 ? Op.find : Op.erase;
      mk[i] = all[(fmix32(i) % present) >>> 0] as number;
    }
  }
  return { ops: gpu.upload(ops), keys: gpu.upload(mk) };
}
const out = gpu.createArray('u32', 2 * m);
const { ops: dops, keys: dkeys } = mixedBatch(full);
const dvals = dkeys;
await profiled(`mixed 2^22 at ${high}`, (enc) => table.encodeApply(enc, dops.buffer, dkeys.buffer, dvals.buffer, m, out.buffer));

// Lanes per locked-pass op: the build and the mixed batch again, for each tile.
for (const tile of (process.env.TILES ?? '32,4').split(',').filter(Boolean).map(Number)) {
  d.lockedTile = tile;
  await table.clear();
  await inBatches(`build to ${high}, tile ${tile}`, all, insert);
  await profiled(`mixed 2^22 at ${high}, tile ${tile}`, (enc) =>
    table.encodeApply(enc, dops.buffer, dkeys.buffer, dvals.buffer, m, out.buffer),
  );
}

// The mixed batch at load 0.5 (its finds and erases drawn from the keys present there).
const atHalf = mixedBatch(half);
for (let rep = 0; rep < 2; rep++) {
  await table.clear();
  await profiled('rebuild to 0.5', (enc) => table.encodeInsert(enc, k1.buffer, k1.buffer, half));
  await profiled(`mixed 2^22 at 0.5 (${rep + 1})`, (enc) =>
    table.encodeApply(enc, atHalf.ops.buffer, atHalf.keys.buffer, atHalf.keys.buffer, m, out.buffer),
  );
}
