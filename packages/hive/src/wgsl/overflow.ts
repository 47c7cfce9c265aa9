import { wgslModule } from '@gpuhash/kernels';
import { commonModule } from './common';

/**
 * The overflow bit of a table bucket (bit 1 of its lock word; bit 0 is the lock): set once any key
 * whose first bucket it is has been stored somewhere else, in its second bucket or the stash. A
 * key whose first bucket has the bit clear can only be in that first bucket, so inserts, finds and
 * erases skip the second bucket and the stash line then: at load 0.5 almost every op reads one
 * key line instead of two. The bit is conservative: set at every such store, kept until clear(),
 * inherited by a split bucket's new partner and by a merge's base bucket (the keys it answers for
 * change bucket with them). Needs \`params\` and \`masks: array<atomic<u32>>\`.
 */
export const overflowModule = wgslModule(
  'hive.overflow',
  /* wgsl */ `
const LOCK_BIT: u32 = 1u;
const OVERFLOW_BIT: u32 = 2u;

fn hv_overflowed(b: u32) -> bool { return (atomicLoad(&masks[params.lock_base + b]) & OVERFLOW_BIT) != 0u; }

/** Records that key now lives in \`bucket\` (a table bucket or a stash line): flags its first bucket when that is not it. */
fn hv_placed(key: u32, bucket: u32) {
  let b1 = hv_b1(key);
  if (b1 != bucket) { atomicOr(&masks[params.lock_base + b1], OVERFLOW_BIT); }
}
`,
  [commonModule],
);
