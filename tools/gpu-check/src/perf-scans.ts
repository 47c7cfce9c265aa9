/**
 * Whole-table calls from the host API, wall time (median of REPS): Hive's `stats()` on a table of
 * 2^HIVE_LOG slots at load 0.5; on a cache of 2^HKV_LOG slots (dim 1), HierarchicalKV's
 * `insertOrAssign` of as many keys from empty and `find` of them (from a BigUint64Array), then
 * `eraseIf` of every entry, `erase` of every key and `exportBatch` of every slot, each after
 * refilling it. What a call costs beside its kernels: the host's conversions and transfers.
 *   [REPS=5] node perf-scans.mjs [HIVE_LOG=27] [HKV_LOG=25]
 */
import { requestGpu } from '@gpuhash/core';
import { HiveTable } from '@gpuhash/hive';
import { HkvCache } from '@gpuhash/hkv';
import { fmix32 } from '@gpuhash/kernels';

const hiveLog = Number(process.argv[2] ?? 27);
const hkvLog = Number(process.argv[3] ?? 25);
const reps = Number(process.env.REPS ?? 5);
const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}; Hive 2^${hiveLog} slots, HKV 2^${hkvLog} slots`);

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number;
async function timed(label: string, before: () => Promise<unknown>, run: () => Promise<unknown>): Promise<void> {
  const ms: number[] = [];
  let last: unknown;
  for (let r = 0; r < reps; r++) {
    await before();
    const t0 = performance.now();
    last = await run();
    ms.push(performance.now() - t0);
  }
  const shown =
    typeof last === 'number' ? last : last && typeof last === 'object' && 'keys' in last ? (last.keys as { length: number }).length : '';
  console.log(
    `${label.padEnd(34)} ${median(ms).toFixed(2)} ms (min ${Math.min(...ms).toFixed(2)}, max ${Math.max(...ms).toFixed(2)})${shown === '' ? '' : `; result ${shown}`}`,
  );
}

// Hive: stats() at load 0.5.
{
  const capacity = 2 ** hiveLog;
  const table = await HiveTable.create(gpu, { capacity, growth: false });
  const n = capacity / 2;
  const keys = new Uint32Array(n);
  for (let j = 0, i = 0; i < n; j++) {
    const k = fmix32(2 * j + 1);
    if (k < 0xfffffffe) keys[i++] = k;
  }
  await table.insert(keys, keys);
  await timed(
    'hive stats()',
    async () => {},
    async () => (await table.stats()).size,
  );
  table.destroy();
}

// HKV: a full cache (dim 1, unique keys), emptied by eraseIf, by erase, and read by exportBatch.
{
  const capacity = 2 ** hkvLog;
  const cache = await HkvCache.create(gpu, { capacity, dim: 1, assumeUniqueKeys: true });
  const keys = new BigUint64Array(capacity);
  for (let i = 0; i < capacity; i++) keys[i] = (BigInt(fmix32(2 * i + 1)) << 32n) | BigInt(fmix32(2 * i + 2));
  const values = new Float32Array(capacity).fill(1);
  const fill = async () => {
    await cache.clear();
    await cache.insertOrAssign(keys, values);
  };
  await timed(
    'hkv insertOrAssign(all)',
    () => cache.clear(),
    () => cache.insertOrAssign(keys, values).then((r) => r.inserted),
  );
  await timed(
    'hkv find(every key)',
    async () => {},
    () => cache.find(keys).then((r) => r.found.length),
  );
  await timed('hkv eraseIf(all)', fill, () => cache.eraseIf({}));
  await timed('hkv erase(every key)', fill, () => cache.erase(keys));
  await timed('hkv exportBatch(all)', fill, () => cache.exportBatch(0, capacity));
  cache.destroy();
}
