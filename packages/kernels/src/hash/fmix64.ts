import { wgslModule } from '../compose';
import { type U64Words, u64FromWords, u64Module, u64ToWords } from './u64';

/**
 * MurmurHash3's 64-bit finaliser for keys stored as two u32 words, `vec2<u32>(lo, hi)`: a
 * bijection on 64 bits, emulated with 32-bit words (`k >> 33` is `hi >> 1` into the low word; the
 * multiplies use `hash_u64_mul`).
 *
 * WGSL: `fn hash_fmix64(key: vec2<u32>) -> vec2<u32>`, and `fn hash_fmix64_u32(key: vec2<u32>) -> u32`,
 * the 64-bit result folded to 32 bits (lo ^ hi) for bucket indices.
 */
export const fmix64Module = wgslModule(
  'kernels.hash.fmix64',
  /* wgsl */ `
fn hash_fmix64(key: vec2<u32>) -> vec2<u32> {
  var k = key;
  k.x ^= k.y >> 1u;
  k = hash_u64_mul(k, vec2<u32>(0xed558ccdu, 0xff51afd7u));
  k.x ^= k.y >> 1u;
  k = hash_u64_mul(k, vec2<u32>(0x1a85ec53u, 0xc4ceb9feu));
  k.x ^= k.y >> 1u;
  return k;
}

fn hash_fmix64_u32(key: vec2<u32>) -> u32 {
  let h = hash_fmix64(key);
  return h.x ^ h.y;
}
`,
  [u64Module],
);

const MASK64 = (1n << 64n) - 1n;

/** MurmurHash3's fmix64 on a bigint (taken mod 2^64). fmix64(0n) = 0n. */
export function fmix64(key: bigint): bigint {
  let k = key & MASK64;
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & MASK64;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & MASK64;
  k ^= k >> 33n;
  return k;
}

/** CPU twin of `hash_fmix64`: the key and the result as (lo, hi) u32 words. */
export function fmix64Words(lo: number, hi: number): U64Words {
  return u64ToWords(fmix64(u64FromWords(lo, hi)));
}

/** CPU twin of `hash_fmix64_u32`: fmix64 folded to a u32 (lo ^ hi). */
export function fmix64U32(lo: number, hi: number): number {
  const [l, h] = fmix64Words(lo, hi);
  return (l ^ h) >>> 0;
}
