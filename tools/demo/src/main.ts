/**
 * The demo: a linear-probing hash table on whatever GPU is present (SwiftShader without one).
 * Inserts 2^20 random pairs, looks up hits and misses, erases half, and checks every answer
 * against a CPU Map. Throughput here is end to end (uploads and downloads included) and, on
 * SwiftShader, is the CPU's: run `pnpm bench` for GPU-timed figures.
 */
import { requestGpu } from '@gpuhash/core';
import { LinearProbeTable } from '@gpuhash/linear-probe';

const n = Number(process.argv[2] ?? 1 << 20);
const gpu = await requestGpu();
console.log(`device: ${gpu.describe()}`);

// Distinct keys from a bijective mixer, never the reserved 0xFFFFFFFD..0xFFFFFFFF.
const mix = (x: number) => {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
};
const keys = new Uint32Array(n);
const misses = new Uint32Array(n);
for (let j = 0; j < n; j++) {
  keys[j] = mix(2 * j + 1);
  misses[j] = mix(2 * j + 2);
}
const values = keys.map((k) => k ^ 0x5bd1e995);
const reference = new Map<number, number>();
for (let j = 0; j < n; j++) if (keys[j]! < 0xfffffffd) reference.set(keys[j]!, values[j]!);
const safe = (a: Uint32Array) => a.filter((k) => k < 0xfffffffd);
const insertKeys = safe(keys);
const missKeys = safe(misses);

const table = await LinearProbeTable.create(gpu, { capacity: 2 * n });
const timed = async <T>(label: string, count: number, op: () => Promise<T>) => {
  const t0 = performance.now();
  const result = await op();
  const ms = performance.now() - t0;
  console.log(
    `${label.padEnd(22)} ${count.toString().padStart(9)} ops ${ms.toFixed(1).padStart(8)} ms ${(count / ms / 1e3).toFixed(1).padStart(8)} M ops/s`,
  );
  return result;
};

let wrong = 0;
const r = await timed('insert', insertKeys.length, () =>
  table.insert(
    insertKeys,
    insertKeys.map((k) => reference.get(k)!),
  ),
);
if (r.inserted !== reference.size || r.failed.length > 0) wrong++;
const hits = await timed('find (hits)', insertKeys.length, () => table.find(insertKeys));
for (let i = 0; i < insertKeys.length; i++) if (!hits.found[i] || hits.values[i] !== reference.get(insertKeys[i]!)) wrong++;
const missed = await timed('find (misses)', missKeys.length, () => table.find(missKeys));
for (let i = 0; i < missKeys.length; i++) if (missed.found[i]) wrong++;
const half = insertKeys.subarray(0, insertKeys.length >> 1);
const erased = await timed('erase half', half.length, () => table.erase(half));
if (erased !== half.length) wrong++;
const after = await table.find(insertKeys);
for (let i = 0; i < insertKeys.length; i++) if (after.found[i] !== (i < half.length ? 0 : 1)) wrong++;

const stats = await table.stats();
console.log(
  `table: ${stats.size} keys in ${stats.capacity} slots (load ${stats.loadFactor.toFixed(3)}), ${stats.tombstones} tombstones, average probe ${stats.averageProbeLength.toFixed(2)}, longest ${stats.maxProbeLength}`,
);
console.log(wrong === 0 ? 'every answer matched the CPU reference' : `${wrong} wrong answers`);
table.destroy();
gpu.destroy();
process.exit(wrong === 0 ? 0 : 1);
