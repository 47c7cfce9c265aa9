/**
 * u64 host arrays as the (low, high) u32 word pairs kernels read, and back. On a little-endian
 * platform (every one WebGPU runs on) a u64's bytes are its low word, then its high word, so a
 * `BigUint64Array` is read in place and results are copied as words; converting each value through
 * bigint arithmetic instead costs about 100 ns a value (seconds for a batch of 2^25 keys).
 */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The (low, high) word pairs of u64s: a view of the same memory (a copy where not little-endian). */
export function u64Words(values: BigUint64Array): Uint32Array {
  if (LITTLE_ENDIAN) return new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
  const words = new Uint32Array(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as bigint;
    words[2 * i] = Number(v & 0xffffffffn);
    words[2 * i + 1] = Number(v >> 32n);
  }
  return words;
}

/** u64s from word pairs (entry i's low word at `i * stride + at`, its high word next), copied. */
export function u64FromWords(words: Uint32Array, count: number, stride = 2, at = 0): BigUint64Array {
  const out = new BigUint64Array(count);
  if (!LITTLE_ENDIAN) {
    for (let i = 0; i < count; i++) {
      out[i] = (BigInt(words[i * stride + at + 1] as number) << 32n) | BigInt(words[i * stride + at] as number);
    }
    return out;
  }
  const pairs = new Uint32Array(out.buffer);
  if (stride === 2 && at === 0) {
    pairs.set(words.subarray(0, 2 * count));
  } else {
    for (let i = 0, j = at; i < count; i++, j += stride) {
      pairs[2 * i] = words[j] as number;
      pairs[2 * i + 1] = words[j + 1] as number;
    }
  }
  return out;
}
