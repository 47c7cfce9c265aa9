import { describe, expect, it } from 'vitest';
import { CACHES, type CachePolicy, cacheStream, type PlaygroundCache, rankKey, runCacheWorkload, zipfRanks } from '../lib/playground/cache';

/** A CPU cache with the playground's interface: one LRU set of `capacity` keys (no buckets). */
function cpuCache(capacity: number, corrupt = false): PlaygroundCache {
  const entries = new Map<string, [number, number]>();
  return {
    capacity,
    epoch: 0,
    async find(keys) {
      const n = keys.length / 2;
      const values = new Float32Array(2 * n);
      const found = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const v = entries.get(`${keys[2 * i]},${keys[2 * i + 1]}`);
        if (!v) continue;
        found[i] = 1;
        values[2 * i] = v[0] + (corrupt ? 1 : 0);
        values[2 * i + 1] = v[1];
      }
      return { values, found };
    },
    async insertOrAssign(keys, values) {
      let inserted = 0;
      let updated = 0;
      let evicted = 0;
      for (let i = 0; i < keys.length / 2; i++) {
        const id = `${keys[2 * i]},${keys[2 * i + 1]}`;
        if (entries.delete(id)) updated++;
        else if (entries.size < capacity) inserted++;
        else {
          entries.delete(entries.keys().next().value as string);
          evicted++;
        }
        entries.set(id, [values[2 * i] as number, values[2 * i + 1] as number]);
      }
      return { inserted, updated, evicted, status: new Uint8Array(keys.length / 2) };
    },
    async size() {
      return entries.size;
    },
    destroy() {},
  };
}

describe('the cache playground', () => {
  it('lists hkv from its package.json', () => {
    expect(CACHES.map((c) => c.id)).toContain('hkv');
  });

  it('draws Zipf ranks with the right head mass, and keys that are never reserved', () => {
    const next = zipfRanks(1000, 1, 7);
    let zeros = 0;
    for (let i = 0; i < 100_000; i++) if (next() === 0) zeros++;
    // P(rank 0) = 1 / H(1000) = 0.1336.
    expect(zeros / 100_000).toBeCloseTo(0.1336, 2);
    for (let r = 0; r < 1000; r++) expect(rankKey(r)[1]).toBeLessThan(2 ** 31);
    expect(cacheStream({ capacity: 64, alpha: 0.99, policies: ['lru'] })).toEqual(
      cacheStream({ capacity: 64, alpha: 0.99, policies: ['lru'] }),
    );
  });

  it('counts hits and checks every value and the size', async () => {
    const spec = { capacity: 256, alpha: 0.99, policies: ['lru', 'lfu'] as CachePolicy[], batches: 8 };
    const [lru] = await runCacheWorkload(() => Promise.resolve(cpuCache(256)), spec, { now: () => 0 });
    expect(lru?.lookups).toBe(8 * 32);
    expect(lru?.mismatches).toBe(0);
    expect(lru?.size).toBe(lru?.inserted);
    expect(lru?.hits).toBeGreaterThan(0);
    const [bad] = await runCacheWorkload(() => Promise.resolve(cpuCache(256, true)), spec, { now: () => 0 });
    expect(bad?.mismatches).toBe(bad?.hits);
  });
});
