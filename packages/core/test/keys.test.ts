import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reservedIndices, u32KeySpec } from '../src';

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
