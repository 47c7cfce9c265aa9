import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { distinctUnflagged, reservedIndices, u32KeySpec } from '../src';

/** The plain reference: indices of words at or above the first reserved key, compared unsigned. */
function reference(words: Uint32Array, first: number): number[] {
  const out: number[] = [];
  words.forEach((w, i) => {
    if (w >= first) out.push(i);
  });
  return out;
}

describe('reserved-key scan', () => {
  it('finds exactly the words at or above the first reserved key, on either side of 2^31', () => {
    const word = fc.oneof(
      fc.integer({ min: 0, max: 0xffffffff }),
      fc.constantFrom(0, 1, 4, 5, 6, 0x7ffffffe, 0x7fffffff, 0x80000000, 0x80000001, 0xfffffffc, 0xfffffffd, 0xfffffffe, 0xffffffff),
    );
    fc.assert(
      fc.property(
        fc.array(word, { maxLength: 200 }),
        fc.constantFrom(5, 0x7fffffff, 0x80000000, 0xfffffffd, 0xffffffff),
        fc.nat(3),
        (list, first, offset) => {
          // A view at an offset into a larger buffer, as batches often are.
          const backing = new Uint32Array(list.length + offset + 2).fill(0xffffffff);
          const words = backing.subarray(offset, offset + list.length);
          words.set(list);
          expect([...reservedIndices(u32KeySpec(first, 'reserved'), words)]).toEqual(reference(words, first));
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe('distinct new keys of a batch', () => {
  it('counts the distinct unflagged keys as a Set does, for u32 and u64 keys', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3 }), fc.boolean()), { maxLength: 300 }),
        (entries) => {
          // Few distinct words, so duplicates are common; the high word makes u64 keys differ.
          const n = entries.length;
          const flags = Uint32Array.from(entries, ([, , f]) => (f ? 1 : 0));
          const low = Uint32Array.from(entries, ([k]) => k * 0x9e3779b1);
          const pairs = new Uint32Array(2 * n);
          entries.forEach(([k, hi], i) => {
            pairs.set([k * 0x9e3779b1, hi], 2 * i);
          });
          const want32 = new Set(entries.filter(([, , f]) => !f).map(([k]) => (k * 0x9e3779b1) >>> 0)).size;
          const want64 = new Set(entries.filter(([, , f]) => !f).map(([k, hi]) => `${(k * 0x9e3779b1) >>> 0}:${hi}`)).size;
          expect(distinctUnflagged(low, 1, flags)).toBe(want32);
          expect(distinctUnflagged(pairs, 2, flags)).toBe(want64);
        },
      ),
    );
  });

  it('counts more distinct keys than a Set may hold (2^24 in V8)', () => {
    const n = 2 ** 24 + 5;
    const words = Uint32Array.from({ length: n }, (_, i) => Math.imul(i, 0x9e3779b1) >>> 0);
    expect(distinctUnflagged(words, 1, new Uint32Array(n))).toBe(n);
  });
});
