/**
 * A table across the one-binding boundary at full size (TABLE: hive or linear-probe): created at
 * 2^27 slots (one binding; 2^(LOG-1) for smaller runs), it grows while LOAD x 2^LOG keys are
 * inserted from host arrays in batches of 2^26, reallocating its slots into windows; every key is
 * then found with its value (finds of 2^26 keys, in window order past 2 GiB of slots) and up to
 * 2^24 absent keys are not; 90% of the keys are erased, the table shrinks back (Hive's
 * shrinkToFit, linear-probe's rehash to twice the live keys), and the rest are found again. Each
 * step prints the table's geometry; any wrong answer is counted and exits 1.
 *   node scale-table.mjs [hive|linear-probe] [log2=28] [load=0.9]
 */
import { requestGpu } from '@gpuhash/core';
import { HiveTable } from '@gpuhash/hive';
import { fmix32 } from '@gpuhash/kernels';
import { LinearProbeTable } from '@gpuhash/linear-probe';

const kind = process.argv[2] ?? 'hive';
if (kind !== 'hive' && kind !== 'linear-probe') throw new Error(`scale-table: no table '${kind}' (hive, linear-probe)`);
const log = Number(process.argv[3] ?? 28);
const load = Number(process.argv[4] ?? 0.9);
const n = Math.floor(2 ** log * load);
const BATCH = 2 ** 26;
const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}; ${kind}, ${n} keys (${load} of 2^${log}), batches of 2^26`);

/** Keys fmix32(2j + 1 + odd) for j in [0, count), reserved ones replaced by the next j. */
function keysOf(count: number, absent: boolean): { keys: Uint32Array; values: Uint32Array } {
  const keys = new Uint32Array(count);
  const values = new Uint32Array(count);
  for (let j = 0, i = 0; i < count; j++) {
    const k = fmix32(2 * j + (absent ? 2 : 1));
    if (k >= 0xfffffffe) continue;
    keys[i] = k;
    values[i++] = j;
  }
  return { keys, values };
}

let wrong = 0;
const t0 = performance.now();
async function step(label: string, run: () => Promise<string>): Promise<void> {
  const t = performance.now();
  const note = await run();
  const s = (await table.stats()) as unknown as Record<string, number>;
  const geometry = ['buckets', 'allocatedBuckets', 'reallocations', 'stashSize', 'rehashes', 'tombstones', 'maxProbeLength']
    .filter((k) => k in s)
    .map((k) => `${k} ${s[k]}`);
  console.log(
    `${label.padEnd(44)} ${((performance.now() - t) / 1000).toFixed(1).padStart(6)} s  ${['size ' + s.size, `capacity ${table.capacity}`, ...geometry].join(', ')}${note ? `; ${note}` : ''}`,
  );
}

/** Finds keys[from, to) in batches; `present(i)` says whether key i should be there (value values[i]). */
async function findAll(keys: Uint32Array, values: Uint32Array, present: (i: number) => boolean): Promise<string> {
  let bad = 0;
  for (let at = 0; at < keys.length; at += BATCH) {
    const part = keys.subarray(at, Math.min(keys.length, at + BATCH));
    const r = await table.find(part);
    for (let i = 0; i < part.length; i++) {
      const want = present(at + i);
      if ((r.found[i] === 1) !== want || (want && r.values[i] !== values[at + i])) bad++;
    }
  }
  wrong += bad;
  return `${bad} wrong of ${keys.length}`;
}

const start = 2 ** Math.min(27, log - 1);
const table = kind === 'hive' ? await HiveTable.create(gpu, { capacity: start }) : await LinearProbeTable.create(gpu, { capacity: start });
const { keys, values } = keysOf(n, false);
await step(`insert, growing from 2^${Math.log2(start)} slots`, async () => {
  let failed = 0;
  for (let at = 0; at < n; at += BATCH) {
    const end = Math.min(n, at + BATCH);
    const r = await table.insert(keys.subarray(at, end), values.subarray(at, end));
    failed += r.failed.length;
  }
  wrong += failed;
  return `${failed} failed`;
});
await step('find every key', () => findAll(keys, values, () => true));
const absent = keysOf(Math.min(2 ** 24, n), true);
await step('find absent keys', () => findAll(absent.keys, absent.values, () => false));
await step('erase 90% (j % 10 != 0)', async () => {
  // A loop, not TypedArray.filter: filter gathers into a plain array first, past V8's heap here.
  const gone = new Uint32Array(n - Math.ceil(n / 10));
  for (let i = 0, o = 0; i < n; i++) if (i % 10 !== 0) gone[o++] = keys[i] as number;
  let erased = 0;
  for (let at = 0; at < gone.length; at += BATCH) erased += await table.erase(gone.subarray(at, Math.min(gone.length, at + BATCH)));
  if (erased !== gone.length) wrong += Math.abs(gone.length - erased);
  return `${erased} erased of ${gone.length}`;
});
await step(kind === 'hive' ? 'shrinkToFit' : 'rehash to twice the live keys', async () => {
  if (table instanceof HiveTable) await table.shrinkToFit();
  else await table.rehash(2 * table.size);
  return '';
});
await step('find every key again', () => findAll(keys, values, (i) => i % 10 === 0));
await step('retrieveAll', async () => {
  const all = await table.retrieveAll();
  const want = Math.ceil(n / 10);
  if (all.keys.length !== want) wrong++;
  return `${all.keys.length} pairs, ${want} expected`;
});
table.destroy();
console.log(`${wrong === 0 ? 'ok' : 'FAIL'}: ${wrong} wrong answers in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
process.exit(wrong === 0 ? 0 : 1);
