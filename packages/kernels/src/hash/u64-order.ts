import { wgslModule } from '../compose';
import { type U64Words, u64FromWords, u64ToWords } from './u64';

/**
 * Ordering and saturating arithmetic on u64 values held as `vec2<u32>` = (lo, hi), and a SWAR
 * byte match, for tables with 64-bit keys and scores (WGSL has neither u64 nor `__vcmpeq4`).
 *
 * WGSL:
 * - `fn hash_u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool`: a < b as unsigned 64-bit values.
 * - `fn hash_u64_le(a: vec2<u32>, b: vec2<u32>) -> bool`: a <= b.
 * - `fn hash_u64_add_sat(a: vec2<u32>, b: vec2<u32>) -> vec2<u32>`: a + b, saturating at 2^64 - 1.
 * - `fn hash_u32_add_sat(a: u32, b: u32) -> u32`: a + b, saturating at 2^32 - 1.
 * - `fn hash_byte_match(word: u32, byte: u32) -> u32`: 0x80 in every byte of `word` equal to
 *   `byte` (exact: no false positives from borrows, unlike `(x - 0x01010101) & ~x & 0x80808080`).
 */
export const u64OrderModule = wgslModule(
  'kernels.hash.u64-order',
  /* wgsl */ `
fn hash_u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.y < b.y || (a.y == b.y && a.x < b.x);
}

fn hash_u64_le(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.y < b.y || (a.y == b.y && a.x <= b.x);
}

fn hash_u64_add_sat(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  let carry = select(0u, 1u, lo < a.x);
  let hi = a.y + b.y;
  let hi2 = hi + carry;
  // Overflow: the high words wrapped, or the carry wrapped them.
  if (hi < a.y || hi2 < hi) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
  return vec2<u32>(lo, hi2);
}

fn hash_u32_add_sat(a: u32, b: u32) -> u32 {
  let s = a + b;
  return select(s, 0xffffffffu, s < a);
}

fn hash_byte_match(word: u32, byte: u32) -> u32 {
  let x = word ^ (byte * 0x01010101u);
  return ~(((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x | 0x7f7f7f7fu);
}
`,
);

const MAX64 = (1n << 64n) - 1n;

/** CPU twin of `hash_u64_lt`. */
export function u64Lt(a: U64Words, b: U64Words): boolean {
  return u64FromWords(a[0], a[1]) < u64FromWords(b[0], b[1]);
}

/** CPU twin of `hash_u64_le`. */
export function u64Le(a: U64Words, b: U64Words): boolean {
  return u64FromWords(a[0], a[1]) <= u64FromWords(b[0], b[1]);
}

/** CPU twin of `hash_u64_add_sat`. */
export function u64AddSat(a: U64Words, b: U64Words): U64Words {
  const s = u64FromWords(a[0], a[1]) + u64FromWords(b[0], b[1]);
  return u64ToWords(s > MAX64 ? MAX64 : s);
}

/** CPU twin of `hash_u32_add_sat`. */
export function u32AddSat(a: number, b: number): number {
  return Math.min((a >>> 0) + (b >>> 0), 0xffffffff);
}

/** CPU twin of `hash_byte_match`: 0x80 in every byte of `word` equal to `byte`. */
export function byteMatch(word: number, byte: number): number {
  let out = 0;
  for (let j = 0; j < 4; j++) if (((word >>> (8 * j)) & 0xff) === (byte & 0xff)) out |= 0x80 << (8 * j);
  return out >>> 0;
}
