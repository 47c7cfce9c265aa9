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

/** Records that key now lives in global slot g: flags its first bucket when g is not its home. */
fn hv_placed(key: u32, g: u32) {
  let b1 = hv_b1(key);
  let bits = hv_placement_bits(key, b1, g);
  if (bits != 0u) { atomicOr(&masks[params.lock_base + b1], bits); }
}
`,
  { requires: [commonModule], needs: ['params', 'masks'] },
);
