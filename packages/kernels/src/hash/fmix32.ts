import { wgslModule } from '../compose';

/**
 * MurmurHash3's 32-bit finaliser: a bijection with full avalanche (every input bit flips every
 * output bit with probability ~1/2), two multiplies and three xor-shifts. The benchmark keys are
 * `fmix32(2j + 1)`.
 *
 * WGSL: `fn hash_fmix32(key: u32) -> u32`.
 */
export const fmix32Module = wgslModule(
  'kernels.hash.fmix32',
  /* wgsl */ `
fn hash_fmix32(key: u32) -> u32 {
  var h = key;
  h ^= h >> 16u;
  h *= 0x85ebca6bu;
  h ^= h >> 13u;
  h *= 0xc2b2ae35u;
  h ^= h >> 16u;
  return h;
}
`,
);

/** CPU twin of `hash_fmix32`. fmix32(0) = 0. */
export function fmix32(key: number): number {
  let h = key >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
