import { fmix32 } from '@gpuhash/kernels';
import { describe, expect, it } from 'vitest';
import {
  assertKeyStreamsCover,
  BENCH_RESERVED,
  benchIndex,
  benchKey,
  benchMiss,
  benchValue,
  fmix32Inverse,
  HIT_LIMIT,
  MISS_LIMIT,
} from '../src/keys';
import { mixCounts } from '../src/workloads/mixed';

describe('key streams', () => {
  it('inverts fmix32', () => {
    for (const x of [0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffd, 0xfffffffe, 0xffffffff, 123456789]) {
      expect(fmix32(fmix32Inverse(x))).toBe(x);
      expect(fmix32Inverse(fmix32(x))).toBe(x);
    }
  });

  it('keeps hits, misses and values apart', () => {
    const hits = new Set(Array.from({ length: 4096 }, (_, j) => benchKey(j)));
    const misses = Array.from({ length: 4096 }, (_, j) => benchMiss(j));
    expect(hits.size).toBe(4096);
    expect(misses.some((m) => hits.has(m))).toBe(false);
    expect(benchKey(0)).toBe(fmix32(1));
    expect(benchMiss(0)).toBe(fmix32(2));
    expect(new Set(Array.from({ length: 4096 }, (_, j) => benchValue(j))).size).toBe(4096);
  });

  it('replaces the reserved images, so the streams stay unique, disjoint and unreserved up to 2^31 keys', () => {
    // The stream indices where fmix32(2j+1) (hits) or fmix32(2j+2) (misses) is reserved, computed here.
    const boundary = BENCH_RESERVED.map((r) => {
      const x = fmix32Inverse(r);
      return x % 2 === 1 ? { hit: true, j: (x - 1) / 2 } : { hit: false, j: ((x - 2) >>> 0) / 2 };
    });
    expect(boundary).toEqual([
      { hit: false, j: 1_363_852_737 },
      { hit: true, j: 1_844_424_800 },
      { hit: true, j: 428_789_825 },
    ]);
    // Windows around every boundary, the streams' ends and starts: every key unique across both
    // streams, none reserved, each mapped back to its stream and index.
    const starts = [0, HIT_LIMIT - 64, MISS_LIMIT - 64, ...boundary.map((b) => b.j - 32)];
    const seen = new Map<number, string>();
    for (const start of starts) {
      for (let j = start; j < start + 64; j++) {
        for (const hit of [true, false]) {
          if (!hit && j >= MISS_LIMIT) continue;
          const key = hit ? benchKey(j) : benchMiss(j);
          const name = `${hit ? 'hit' : 'miss'} ${j}`;
          expect(BENCH_RESERVED, name).not.toContain(key);
          const other = seen.get(key);
          if (other !== undefined && other !== name) throw new Error(`${name} and ${other} share key ${key}`);
          seen.set(key, name);
          expect(benchIndex(key), name).toEqual({ hit, j });
          // Unchanged wherever the plain image is not reserved, so earlier results stay comparable.
          const plain = fmix32((hit ? 2 * j + 1 : 2 * j + 2) >>> 0);
          if (!BENCH_RESERVED.includes(plain)) expect(key, name).toBe(plain);
        }
      }
    }
    // The proof's premise: each replacement is the image of a miss index at or past MISS_LIMIT.
    for (const b of boundary) {
      const key = b.hit ? benchKey(b.j) : benchMiss(b.j);
      const x = fmix32Inverse(key);
      expect(x % 2).toBe(0);
      expect(((x - 2) >>> 0) / 2).toBeGreaterThanOrEqual(MISS_LIMIT);
    }
    expect(() => assertKeyStreamsCover(HIT_LIMIT, MISS_LIMIT, [0xfffffffd, 0xfffffffe, 0xffffffff], 't')).not.toThrow();
    expect(() => assertKeyStreamsCover(HIT_LIMIT + 1, 0, [], 't')).toThrow(/key streams hold/);
    expect(() => assertKeyStreamsCover(0, MISS_LIMIT + 1, [], 't')).toThrow(/key streams hold/);
    expect(() => assertKeyStreamsCover(1, 1, [0], 't')).toThrow(/reserves key 0/);
  });

  it('splits mixed batches into exact op counts', () => {
    expect(mixCounts({ insert: 0.5, erase: 0.2, findHit: 0.3, findMiss: 0 }, 2048)).toEqual({
      inserts: 1024,
      erases: 410,
      hits: 614,
      misses: 0,
    });
    expect(mixCounts({ insert: 0.1, erase: 0.1, findHit: 0.4, findMiss: 0.4 }, 100)).toEqual({
      inserts: 10,
      erases: 10,
      hits: 40,
      misses: 40,
    });
    const c = mixCounts({ insert: 0.2, erase: 0.2, findHit: 0.3, findMiss: 0.3 }, 7);
    expect(c.inserts + c.erases + c.hits + c.misses).toBe(7);
  });
});
