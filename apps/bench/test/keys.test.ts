import { fmix32 } from '@gpuhash/kernels';
import { describe, expect, it } from 'vitest';
import { assertNoReservedKeysBelow, benchKey, benchMiss, benchValue, fmix32Inverse, reservedIndices } from '../src/keys';
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

  it('finds the stream indices of reserved keys, all beyond 2^28 for linear-probe', () => {
    const reserved = [0xffffffff, 0xfffffffe, 0xfffffffd];
    const { hits, misses } = reservedIndices(reserved);
    for (const j of hits) expect(reserved).toContain(benchKey(j));
    for (const j of misses) expect(reserved).toContain(benchMiss(j));
    expect(hits.length + misses.length).toBe(3);
    expect(() => assertNoReservedKeysBelow(2 ** 28, reserved, 't')).not.toThrow();
    expect(() => assertNoReservedKeysBelow(2 ** 31, reserved, 't')).toThrow(/maps to a reserved key/);
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
