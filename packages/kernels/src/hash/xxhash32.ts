import { wgslModule } from '../compose';

// XXH32's primes (xxHash specification); the WGSL below spells the same values.
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const PRIME32_4 = 0x27d4eb2f;
const PRIME32_5 = 0x165667b1;

/**
 * XXH32 of one 32-bit key, i.e. XXH32 over the key's 4 little-endian bytes: the short-input path
 * (no stripes: acc = seed + PRIME32_5 + length, one 4-byte lane, then the avalanche), so it returns
 * exactly what the reference library returns for those 4 bytes and that seed.
 *
 * WGSL: `fn hash_xxhash32(key: u32, seed: u32) -> u32`.
 */
export const xxhash32Module = wgslModule(
  'kernels.hash.xxhash32',
  /* wgsl */ `
fn hash_xxhash32(key: u32, seed: u32) -> u32 {
  var h = seed + 0x165667b1u + 4u;
  h += key * 0xc2b2ae3du;
  h = ((h << 17u) | (h >> 15u)) * 0x27d4eb2fu;
  h ^= h >> 15u;
  h *= 0x85ebca77u;
  h ^= h >> 13u;
  h *= 0xc2b2ae3du;
  h ^= h >> 16u;
  return h;
}
`,
);

/** CPU twin of `hash_xxhash32`: XXH32(little-endian bytes of `key`, `seed`). */
export function xxhash32(key: number, seed = 0): number {
  let h = (seed + PRIME32_5 + 4) | 0;
  h = (h + Math.imul(key, PRIME32_3)) | 0;
  h = Math.imul((h << 17) | (h >>> 15), PRIME32_4);
  h ^= h >>> 15;
  h = Math.imul(h, PRIME32_2);
  h ^= h >>> 13;
  h = Math.imul(h, PRIME32_3);
  h ^= h >>> 16;
  return h >>> 0;
}
