/**
 * Seeded randomness for tests: every random input is reproducible from the seed printed with a
 * failure. `GPUHASH_SEED` overrides the default seed of a run.
 */
export interface Rng {
  readonly seed: number;
  /** A uniform u32. */
  u32(): number;
  /** A uniform integer in [0, n). */
  below(n: number): number;
  /** `length` uniform u32s. */
  u32Array(length: number): Uint32Array;
  /** `length` distinct u32s, none equal to any of `exclude`. */
  distinctU32(length: number, exclude?: readonly number[]): Uint32Array;
}

export function defaultSeed(): number {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.GPUHASH_SEED;
  return env ? Number.parseInt(env, 10) >>> 0 : 0x9e3779b9;
}

/** xorshift128+ folded to 32 bits: fast, and decorrelated enough for test inputs. */
export function createRng(seed: number = defaultSeed()): Rng {
  let s0 = (seed ^ 0x6a09e667) >>> 0 || 1;
  let s1 = Math.imul(seed ^ 0xbb67ae85, 0x85ebca6b) >>> 0 || 2;
  let s2 = Math.imul(seed ^ 0x3c6ef372, 0xc2b2ae35) >>> 0 || 3;
  let s3 = (seed + 0xa54ff53a) >>> 0 || 4;
  const u32 = (): number => {
    // xoshiro128** (Blackman and Vigna)
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    return result;
  };
  for (let i = 0; i < 16; i++) u32();
  return {
    seed,
    u32,
    below: (n) => Math.floor((u32() / 0x1_0000_0000) * n),
    u32Array(length) {
      const out = new Uint32Array(length);
      for (let i = 0; i < length; i++) out[i] = u32();
      return out;
    },
    distinctU32(length, exclude = []) {
      const seen = new Set<number>(exclude);
      const out = new Uint32Array(length);
      for (let i = 0; i < length; ) {
        const v = u32();
        if (seen.has(v)) continue;
        seen.add(v);
        out[i++] = v;
      }
      return out;
    },
  };
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
