import { wgslModule } from '../compose';

/**
 * 64-bit integer arithmetic on `vec2<u32>` = (lo, hi), for WGSL, which has no u64 and no mul-high.
 * Products are built from 16-bit limbs, whose partial products fit in 32 bits.
 *
 * WGSL:
 * - `fn hash_u64_mul_wide(a: u32, b: u32) -> vec2<u32>`: the full 64-bit product a * b.
 * - `fn hash_u64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32>`: a * b mod 2^64.
 * - `fn hash_u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32>`: a + b mod 2^64.
 */
export const u64Module = wgslModule(
  'kernels.hash.u64',
  /* wgsl */ `
fn hash_u64_mul_wide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  // The bits at 2^16..2^48: three 16-bit pieces, so the sum (< 3 * 2^16) cannot overflow.
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  let lo = (mid << 16u) | (p00 & 0xffffu);
  let hi = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
  return vec2<u32>(lo, hi);
}

fn hash_u64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = hash_u64_mul_wide(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}

fn hash_u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
`,
);

const MASK64 = (1n << 64n) - 1n;

/** A u64 as (lo, hi) u32 words, the layout of WGSL's `vec2<u32>`. */
export type U64Words = [lo: number, hi: number];

/** Joins (lo, hi) u32 words into a bigint. */
export function u64FromWords(lo: number, hi: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

/** Splits a bigint (taken mod 2^64) into (lo, hi) u32 words. */
export function u64ToWords(x: bigint): U64Words {
  const v = x & MASK64;
  return [Number(v & 0xffffffffn), Number(v >> 32n)];
}

/** CPU twin of `hash_u64_mul_wide` (BigInt, so independent of the limb arithmetic). */
export function u64MulWide(a: number, b: number): U64Words {
  return u64ToWords(BigInt(a >>> 0) * BigInt(b >>> 0));
}

/** CPU twin of `hash_u64_mul`. */
export function u64Mul(a: U64Words, b: U64Words): U64Words {
  return u64ToWords(u64FromWords(a[0], a[1]) * u64FromWords(b[0], b[1]));
}

/** CPU twin of `hash_u64_add`. */
export function u64Add(a: U64Words, b: U64Words): U64Words {
  return u64ToWords(u64FromWords(a[0], a[1]) + u64FromWords(b[0], b[1]));
}
