import { wgslModule } from '@gpuhash/kernels';
import { commonModule } from './common';

/**
 * Helpers over the placement bits of a bucket's lock word (see \`commonModule\`): reading them
 * and setting them on every store of a key. Needs \`params\` and \`masks: array<atomic<u32>>\`.
 */
export const overflowModule = wgslModule(
  'hive.overflow',
  /* wgsl */ `
/** Bucket b's placement bits (its lock word without the lock). */
fn hv_placement(b: u32) -> u32 { return atomicLoad(&masks[params.lock_base + b]) & PLACEMENT_BITS; }

/**
 * The placement bits that storing key in global slot g (a table bucket's or a stash line's) sets
 * on the key's first bucket b1: none when g is in the key's home in b1.
 */
fn hv_placement_bits(key: u32, b1: u32, g: u32) -> u32 {
  let h = hv_home(key);
  if (g / 32u >= params.nalloc) { return OVERFLOW_BIT | STASH_BIT | hv_away_bit(key); }
  if (g / 32u != b1) { return OVERFLOW_BIT | hv_away_bit(key); }
  if ((g % 32u) / HOME_SLOTS != h) { return hv_away_bit(key); }
  return 0u;
}

/** Records that key now lives in global slot g: flags its first bucket when g is not its home. */
fn hv_placed(key: u32, g: u32) {
  let b1 = hv_b1(key);
  let bits = hv_placement_bits(key, b1, g);
  if (bits != 0u) { atomicOr(&masks[params.lock_base + b1], bits); }
}
`,
  [commonModule],
);
