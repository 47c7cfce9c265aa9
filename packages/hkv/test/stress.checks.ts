import { defineChecks } from '@gpuhash/testing';
import { HkvCache, HkvStatus, type ScorePolicy } from '../src';
import { expect, keyPool, rows, sameRow, sizeScale } from './helpers';

/**
 * Mixed insertAndEvict, assign, find and erase batches on a cache at load 1.0: zero wrong values
 * (every value found is the last one written for its key) and zero lost keys (a key neither
 * evicted nor erased is always found; an evicted or erased key never is). Larger on a GPU.
 */
async function stress(
  gpu: Parameters<typeof HkvCache.create>[0],
  rng: import('@gpuhash/testing').Rng,
  scale: number,
  policy: ScorePolicy,
  mode: 'single' | 'dual' = 'single',
  maxDeviceBytesForValues?: number,
) {
  const dim = 4;
  const cache = await HkvCache.create(gpu, { capacity: 1024 * scale, dim, policy, mode, maxDeviceBytesForValues });
  try {
    const pool = keyPool(rng, 3 * cache.capacity);
    const batch = cache.capacity / 4;
    const stored = new Map<bigint, Float32Array>();
    const pick = (n: number) => BigUint64Array.from({ length: n }, () => pool[rng.below(pool.length)] as bigint);
    let evictions = 0;
    for (let round = 0; round < 16; round++) {
      const what = `${policy} ${mode} round ${round}`;
      const ins = pick(batch);
      const values = rows(ins, dim, 3 * round + 1);
      const scores = policy === 'custom' ? BigUint64Array.from(ins, () => BigInt(rng.u32())) : undefined;
      const r = await cache.insertAndEvict(ins, values, scores);
      r.status.forEach((s, i) => {
        if (s === HkvStatus.inserted || s === HkvStatus.evicted || s === HkvStatus.updated)
          stored.set(ins[i] as bigint, values.slice(i * dim, (i + 1) * dim));
      });
      for (const k of r.evictedKeys) {
        expect(stored.has(k), `${what}: evicted 0x${k.toString(16)}, which was not stored`);
        stored.delete(k);
      }
      evictions += r.evictedKeys.length;
      const upd = pick(batch / 2);
      const newValues = rows(upd, dim, 3 * round + 2);
      const a = await cache.assign(upd, newValues, policy === 'custom' ? BigUint64Array.from(upd, () => BigInt(rng.u32())) : undefined);
      a.status.forEach((s, i) => {
        const k = upd[i] as bigint;
        if (s === HkvStatus.updated) stored.set(k, newValues.slice(i * dim, (i + 1) * dim));
        if (s === HkvStatus.missing) expect(!stored.has(k), `${what}: assign missed stored 0x${k.toString(16)}`);
      });
      const era = pick(batch / 8);
      const before = new Set([...era].filter((k) => stored.has(k)));
      const erased = await cache.erase(era);
      expect(erased === before.size, `${what}: erased ${erased}, expected ${before.size}`);
      for (const k of before) stored.delete(k);
      const f = await cache.find(pool);
      let found = 0;
      pool.forEach((k, i) => {
        const want = stored.get(k);
        expect(
          (f.found[i] === 1) === (want !== undefined),
          `${what}: 0x${k.toString(16)} found ${f.found[i]}, expected ${want !== undefined} (a lost or a ghost key)`,
        );
        if (want) {
          found++;
          expect(sameRow(f.values.slice(i * dim, (i + 1) * dim), want), `${what}: 0x${k.toString(16)} has a wrong value`);
        }
      });
      expect((await cache.size()) === found, `${what}: size ${await cache.size()}, found ${found}`);
    }
    expect((await cache.loadFactor()) > 0.9 && evictions > 0, `the stress never reached a full cache (${evictions} evictions)`);
  } finally {
    cache.destroy();
  }
}

export const stressChecks = defineChecks('hkv/stress', [
  {
    name: 'lru: mixed batches at load 1.0, zero wrong values and zero lost keys',
    run: ({ gpu, rng, scale }) => stress(gpu, rng, sizeScale(scale), 'lru'),
  },
  {
    name: 'custom: mixed batches at load 1.0 with admission, zero wrong values and zero lost keys',
    run: ({ gpu, rng, scale }) => stress(gpu, rng, sizeScale(scale), 'custom'),
  },
  {
    name: 'dual-bucket, lru: mixed batches at load 1.0, zero wrong values and zero lost keys',
    run: ({ gpu, rng, scale }) => stress(gpu, rng, sizeScale(scale), 'lru', 'dual'),
  },
  {
    name: 'host tier (a quarter of the values on the GPU), lru: mixed batches at load 1.0, zero wrong values and zero lost keys',
    run: ({ gpu, rng, scale }) => stress(gpu, rng, sizeScale(scale), 'lru', 'single', 256 * 4 * 4 * sizeScale(scale)),
  },
]);
