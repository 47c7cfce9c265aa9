import { wgslModule } from '../compose';
import { u64Module } from './u64';

/** The prime of the universal family: 2^32 - 5, the largest prime below 2^32. */
export const UNIVERSAL_PRIME = 4294967291;

/**
 * The universal hash of SlabHash (Ashkiani et al., IPDPS 2018) and Horton tables (Breslow et al., USENIX ATC 2016), h(k) = ((a*k + b) mod p) mod B
 * with p = 2^32 - 5, computed exactly: a*k + b (< 2^64 for any u32 a, k, b) is built from 16-bit
 * limbs, then reduced with 2^32 ≡ 5 (mod p) until it fits 32 bits, then by one conditional
 * subtraction. Exact for every u32 input; the family is a in [1, p), b in [0, p).
 *
 * WGSL: `const HASH_UNIVERSAL_PRIME: u32`, `fn hash_universal_mod_p(key: u32, a: u32, b: u32) -> u32`
 * (in [0, p)), and `fn hash_universal(key: u32, a: u32, b: u32, buckets: u32) -> u32` (buckets >= 1;
 * WGSL's `x % 0u` is 0 rather than an error).
 */
export const universalModule = wgslModule(
  'kernels.hash.universal',
  /* wgsl */ `
const HASH_UNIVERSAL_PRIME: u32 = ${UNIVERSAL_PRIME}u;

fn hash_universal_mod_p(key: u32, a: u32, b: u32) -> u32 {
  let x = hash_u64_add(hash_u64_mul_wide(a, key), vec2<u32>(b, 0u));
  // hi * 2^32 + lo ≡ hi * 5 + lo (mod p): at most 6 * 2^32, so the new hi is at most 5.
  let s = hash_u64_add(hash_u64_mul_wide(x.y, 5u), vec2<u32>(x.x, 0u));
  // Again; an overflow here leaves t < 25 and is worth 2^32 ≡ 5 more.
  let t = s.x + s.y * 5u;
  let r = t + select(0u, 5u, t < s.x);
  // r < 2^32 < 2p: one subtraction at most.
  return select(r, r - HASH_UNIVERSAL_PRIME, r >= HASH_UNIVERSAL_PRIME);
}

fn hash_universal(key: u32, a: u32, b: u32, buckets: u32) -> u32 {
  return hash_universal_mod_p(key, a, b) % buckets;
}
`,
  [u64Module],
);

const P = BigInt(UNIVERSAL_PRIME);

/** CPU twin of `hash_universal_mod_p`: (a*key + b) mod p, in BigInt (independent of the WGSL limbs). */
export function universalHashModP(key: number, a: number, b: number): number {
  return Number((BigInt(a >>> 0) * BigInt(key >>> 0) + BigInt(b >>> 0)) % P);
}

/** CPU twin of `hash_universal`: ((a*key + b) mod p) mod buckets. Throws a RangeError for buckets < 1. */
export function universalHash(key: number, a: number, b: number, buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > 0xffffffff)
    throw new RangeError(`universalHash: buckets must be a u32 >= 1, got ${buckets}`);
  return universalHashModP(key, a, b) % buckets;
}

/** One member of the universal family: a in [1, p), b in [0, p). */
export interface UniversalParams {
  a: number;
  b: number;
}

/**
 * Draws valid universal-hash parameters from a source of uniform u32s (e.g. `rng.u32`), by
 * rejection, so both are uniform over their ranges.
 */
export function randomUniversalParams(nextU32: () => number): UniversalParams {
  const draw = (min: number): number => {
    for (;;) {
      const v = nextU32() >>> 0;
      if (v >= min && v < UNIVERSAL_PRIME) return v;
    }
  };
  const a = draw(1);
  return { a, b: draw(0) };
}
