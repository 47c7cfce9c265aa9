import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wordRange } from '../src';

describe('wordRange', () => {
  it('takes words of a buffer, and words of a range within it, as byte ranges', () => {
    const buffer = { size: 1 << 20 } as unknown as GPUBuffer;
    fc.assert(
      fc.property(fc.nat(1000), fc.nat(1000), fc.nat(1000), fc.nat(1000), (a, n, b, m) => {
        expect(wordRange(buffer, a, n)).toEqual({ buffer, offset: 4 * a, size: 4 * n });
        // A range of a range starts from the outer range's offset.
        expect(wordRange(wordRange(buffer, a, n + m + b), b, m)).toEqual({ buffer, offset: 4 * (a + b), size: 4 * m });
      }),
    );
  });
});
