import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { u64FromWords, u64Words } from '../src/u64-words';

/** The reference: each u64's low and high words by bigint arithmetic. */
const refWords = (values: bigint[]) => values.flatMap((v) => [Number(v & 0xffffffffn), Number(v >> 32n)]);
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });

describe('u64 host arrays as word pairs', () => {
  it('u64Words gives each value as (low, high) words, from any offset into its buffer', () => {
    fc.assert(
      fc.property(fc.array(u64, { maxLength: 64 }), fc.nat({ max: 8 }), (values, skip) => {
        const all = BigUint64Array.from([...Array.from({ length: skip }, () => 7n), ...values]);
        const view = all.subarray(skip);
        expect(Array.from(u64Words(view))).toEqual(refWords(values));
      }),
    );
  });

  it('u64FromWords reads pairs at any stride and offset into a copy', () => {
    fc.assert(
      fc.property(fc.array(u64, { maxLength: 64 }), fc.integer({ min: 2, max: 7 }), fc.nat({ max: 5 }), (values, stride, rawAt) => {
        const at = rawAt % (stride - 1);
        const words = new Uint32Array(values.length * stride + at + 2).fill(0xdeadbeef);
        const ref = refWords(values);
        values.forEach((_, i) => {
          words[i * stride + at] = ref[2 * i] as number;
          words[i * stride + at + 1] = ref[2 * i + 1] as number;
        });
        const out = u64FromWords(words, values.length, stride, at);
        expect(Array.from(out)).toEqual(values);
        words.fill(0);
        expect(Array.from(out)).toEqual(values);
      }),
    );
  });
});
