import { fmix32 } from '@gpuhash/kernels';

/**
 * The keys every playground run uses, the same scheme as the benchmark suite: hit keys are
 * fmix32(2j+1), miss keys fmix32(2j+2). fmix32 is a bijection, so the two streams never share
 * a key and neither repeats.
 */

/** Tables reserve a few words at the top of the u32 range (empty, tombstone, busy...); skip them all. */
const RESERVED_FLOOR = 0xfffffff0;

/** A stream of distinct keys: odd inputs for keys that get inserted, even ones for misses. */
export class KeyStream {
  private next = 0;
  constructor(private readonly parity: 1 | 2) {}

  /** The next `n` keys of the stream. */
  take(n: number): Uint32Array {
    const out = new Uint32Array(n);
    for (let i = 0; i < n; ) {
      const key = fmix32(2 * this.next++ + this.parity);
      if (key >= RESERVED_FLOOR) continue;
      out[i++] = key;
    }
    return out;
  }
}

export const hitStream = (): KeyStream => new KeyStream(1);
export const missStream = (): KeyStream => new KeyStream(2);

/** The value stored under a key: derived from it, so a lookup can be checked without a map. */
export function valueFor(key: number): number {
  // Not the key itself: a table that swapped key and value words must show up as a mismatch.
  return fmix32((key ^ 0x9e3779b9) >>> 0);
}

export function valuesFor(keys: Uint32Array): Uint32Array {
  const out = new Uint32Array(keys.length);
  for (let i = 0; i < keys.length; i++) out[i] = valueFor(keys[i] as number);
  return out;
}

/** Small seeded generator (mulberry32) for the mixed workload's choices: runs are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
