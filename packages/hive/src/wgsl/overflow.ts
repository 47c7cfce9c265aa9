import { wgslModule } from '@gpuhash/kernels';
import { HOMES } from '../split-pointer';
import { commonModule } from './common';

/**
 * Where a bucket's keys may be, in its lock word (bit 0 is the lock):
 * - the overflow bit (bit 1): set once any key whose first bucket this is has been stored
 *   somewhere else, in its second bucket or the stash. A key whose first bucket has the bit clear
 *   can only be in that first bucket, so inserts, finds and erases skip the second bucket and the
 *   stash line then: at load 0.5 almost every op reads one key line instead of two.
 * - the stash bit (bit 6): set once any key whose first bucket this is has been stored in the
 *   stash (it also sets the overflow bit). Lookups read the stash line only when it is set: at
 *   load 0.95 about half the buckets have overflowed, but few have sent a key to the stash.
 * - the home bits (bit 2 + h, h < HOMES): set once any key whose first bucket this is and whose
 *   home is h (\`hv_home\`) has been stored anywhere but home h of this bucket. A find whose key
 *   is not in its home, and whose home bit is clear, is a miss after reading one DRAM burst.
 * The bits are conservative: set at every such store (whoever stores sets them, before the batch
 * ends, and finds run in their own dispatch), kept until clear(), inherited by a split bucket's
 * new partner and by a merge's base bucket (the keys they answer for change bucket with them).
 * Needs \`params\` and \`masks: array<atomic<u32>>\`.
 */
export const overflowModule = wgslModule(
  'hive.overflow',
  /* wgsl */ `
const LOCK_BIT: u32 = 1u;
const OVERFLOW_BIT: u32 = 2u;
const STASH_BIT: u32 = 64u;
/** Every placement bit: the overflow bit, the home bits and the stash bit. */
const PLACEMENT_BITS: u32 = ${`0x${(2 | (((1 << HOMES) - 1) << 2) | 64).toString(16)}`}u;

/** The home bit of home h. */
fn hv_home_bit(h: u32) -> u32 { return 4u << h; }

/** Bucket b's placement bits (its lock word without the lock). */
fn hv_placement(b: u32) -> u32 { return atomicLoad(&masks[params.lock_base + b]) & PLACEMENT_BITS; }

/**
 * The placement bits that storing key in global slot g (a table bucket's or a stash line's) sets
 * on the key's first bucket b1: none when g is in the key's home in b1.
 */
fn hv_placement_bits(key: u32, b1: u32, g: u32) -> u32 {
  let h = hv_home(key);
  if (g / 32u >= params.nalloc) { return OVERFLOW_BIT | STASH_BIT | hv_home_bit(h); }
  if (g / 32u != b1) { return OVERFLOW_BIT | hv_home_bit(h); }
  if ((g % 32u) / HOME_SLOTS != h) { return hv_home_bit(h); }
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
