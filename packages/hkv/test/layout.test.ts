import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BUCKET_SLOTS,
  bucketOf,
  digestOf,
  EMPTY_DIGEST,
  hashByteOf,
  isReservedKey,
  keyHash,
  RESERVED_KEYS,
  roundCapacity,
  valueSplit,
} from '../src';

describe('layout', () => {
  it('rounds capacities up to a power-of-two number of buckets', () => {
    expect(roundCapacity(1)).toBe(128);
    expect(roundCapacity(128)).toBe(128);
    expect(roundCapacity(129)).toBe(256);
    expect(roundCapacity(1000)).toBe(1024);
    expect(roundCapacity(2 ** 27)).toBe(2 ** 27);
  });

  it('splits values into whole buckets per buffer', () => {
    expect(valueSplit(1024, 4, 1 << 30)).toEqual({ sliceSlots: 1024, slices: 1 });
    expect(valueSplit(1024, 4, BUCKET_SLOTS * 4 * 4 * 3)).toEqual({ sliceSlots: 384, slices: 3 });
    // 2^27 slots of dim 64 (32 GiB) under 2 GiB bindings: 16 buffers.
    expect(valueSplit(2 ** 27, 64, 2 ** 31)).toEqual({ sliceSlots: 2 ** 23, slices: 16 });
  });

  it('reserves exactly the three top keys', () => {
    expect(isReservedKey(0xffffffff, 0xffffffff)).toBe(true);
    expect(isReservedKey(0xfffffffe, 0xffffffff)).toBe(true);
    expect(isReservedKey(0xfffffffd, 0xffffffff)).toBe(true);
    expect(isReservedKey(0xfffffffc, 0xffffffff)).toBe(false);
    expect(isReservedKey(0xffffffff, 0xfffffffe)).toBe(false);
    expect(RESERVED_KEYS.locked).toBe(0xffff_ffff_ffff_fffdn);
  });

  it("gives no key the empty slots' digest, in either mode", () => {
    expect(EMPTY_DIGEST).toBe(keyHash(0xffffffff, 0xffffffff)[1] & 0xff);
    const word = fc.integer({ min: 0, max: 0xffffffff });
    fc.assert(
      fc.property(word, word, fc.boolean(), (lo, hi, dual) => {
        const h = keyHash(lo, hi)[1];
        const byte = dual ? h >>> 24 : h & 0xff;
        const d = digestOf(lo, hi, dual);
        return d !== EMPTY_DIGEST && d === (byte === EMPTY_DIGEST ? byte ^ 1 : byte);
      }),
      { numRuns: 20000 },
    );
    // A key whose hash byte is the empty digest (about 1 in 256) moves to the neighbouring byte.
    let lo = 0;
    while (hashByteOf(lo, 7) !== EMPTY_DIGEST) lo++;
    expect(digestOf(lo, 7)).toBe(EMPTY_DIGEST ^ 1);
  });

  it('spreads keys evenly over buckets', () => {
    const counts = new Array(64).fill(0);
    for (let i = 0; i < 64 * 256; i++) counts[bucketOf(i, i >>> 3, 64)]++;
    expect(Math.min(...counts)).toBeGreaterThan(180);
    expect(Math.max(...counts)).toBeLessThan(340);
  });
});
