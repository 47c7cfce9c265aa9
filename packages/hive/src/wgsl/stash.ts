import type { WgslModule } from '@gpuhash/kernels';
import { cooperativeVariant } from './cooperative-variant';
import { locksModule } from './locks';
import { wabcModule } from './wabc';

/**
 * The overflow stash (Hive's step 4). The paper's is a ring buffer of 1-2% of the capacity that
 * lookups scan; here it is 1/64 of the allocated buckets as 32-slot lines after the table's
 * buckets, a key's line chosen by a third hash (`hv_stash_bucket`), so a lookup reads one line
 * with the same WCME code as a bucket. Lines are shared by keys of different buckets: claims are
 * WABC atomics, not locks; a key is only stashed, and only looked for by the locked pass, under
 * the locks of its own two buckets, so one key never lands twice.
 */
export function stashModule(subgroups: boolean): WgslModule {
  return cooperativeVariant(
    'hive.stash',
    subgroups,
    /* wgsl */ `
/** Puts (k, v) in its stash line; false when the line is full. */
fn hv_stash_put(k: u32, v: u32, leader: u32) -> bool {
  let line = hv_stash_bucket(k);
  for (var tries = 0u; tries < 33u; tries++) {
    let r = hv_wabc(line, 1u, leader);
    if (r.x != 0u) {
      if (cg_lane() == leader) { hv_store_locked(line * 32u + firstTrailingBit(r.x), k, v); }
      return true;
    }
    if (r.z == 0u) { break; } // full; otherwise another group took that bit first
  }
  return false;
}
`,
    { requires: [wabcModule(subgroups), locksModule(subgroups)] },
  );
}
