import type { WgslModule } from '@gpuhash/kernels';
import { cooperativeVariant } from './cooperative-variant';

/**
 * WABC: lanes of a group that want slots in one bucket share one atomic on its free mask. The
 * leader reads the mask, takes the lowest \`count\` free bits with one atomicAnd, and every lane
 * learns which of them it really got (bits another group took meanwhile are missing) and the mask
 * as it was just before, which says which slots were claimed earlier.
 */
export function wabcModule(subgroups: boolean): WgslModule {
  return cooperativeVariant(
    'hive.wabc',
    subgroups,
    /* wgsl */ `
/**
 * x: slots claimed; y: the free mask just before the claim; z: slots still free after it (0: the
 * bucket is full, or became full meanwhile). Every lane gets the same answer.
 */
fn hv_wabc(b: u32, count: u32, leader: u32) -> vec3<u32> {
  var got = 0u;
  var old = 0u;
  var left = 0u;
  if (cg_lane() == leader) {
    let free = atomicLoad(&masks[b]);
    let want = hv_lowest_bits(free, count);
    if (want == 0u) {
      old = free;
    } else {
      old = atomicAnd(&masks[b], ~want);
      got = want & old;
      left = old & ~want;
    }
  }
  return vec3<u32>(cg_broadcast(got, leader), cg_broadcast(old, leader), cg_broadcast(left, leader));
}
`,
    { needs: ['masks'] },
  );
}
