import { cooperativeVariantModule, type WgslModule } from '@gpuhash/kernels';
import { layoutModule } from './layout';
import { type SlabRead, scanModule } from './scan';

/**
 * SEARCH, COUNT and SEARCHALL, run by a whole cooperative group for one key (the source lane's)
 * and its bucket, `home`.
 * Lookups never write, so lookup kernels read through the plain binding; mixed batches use these
 * over atomic reads.
 */
const LOOKUPS_CODE = /* wgsl */ `
/** SEARCH: (value, 1) of the first copy of k in its chain, or (0, 0). */
fn sl_find(k: u32, home: u32) -> vec2<u32> {
  var s = home;
  for (var hops = 0u; hops < params.max_hops; hops++) {
    let r = sl_scan(s, k, true, true, false, false, false);
    if (r.key_word != NONE) { return vec2<u32>(select(r.key_value, 0u, SET_MODE), 1u); }
    if (r.next == EMPTY_POINTER) { break; }
    s = r.next;
  }
  return vec2<u32>(0u, 0u);
}

/**
 * Walks k's chain and counts its copies (multimap mode: key words only). With \`gather\`, each
 * copy's value is also written to out_values[at + rank], copies in chain order.
 */
fn sl_walk_copies(k: u32, home: u32, gather: bool, at: u32) -> u32 {
  var s = home;
  var copies = 0u;
  let g = TILE;
  for (var hops = 0u; hops < params.max_hops; hops++) {
    var next = EMPTY_POINTER;
    for (var c0 = 0u; c0 < SLAB_CELLS; c0 += g) {
      let c = c0 + cg_lane();
      let cell = sl_cell(s, c);
      let hit = sl_key_a(c) && cell.x == k;
      let m = cg_ballot32(hit);
      if (gather && hit) { sl_gather(at + copies + countOneBits(m & ((1u << cg_lane()) - 1u)), cell.y); }
      copies += countOneBits(m);
      if (c0 + g >= SLAB_CELLS) { next = cg_broadcast(cell.y, NEXT_CELL - c0); }
    }
    if (next == EMPTY_POINTER) { break; }
    s = next;
  }
  return copies;
}
`;

/** sl_find and sl_walk_copies over the chosen read. A kernel using sl_walk_copies defines sl_gather(at, value). */
export function lookupsModule(read: SlabRead, subgroups: boolean): WgslModule {
  return cooperativeVariantModule(`slab.lookups.${read}`, subgroups, LOOKUPS_CODE, {
    requires: [layoutModule, scanModule(read, subgroups)],
    needs: ['params', 'SET_MODE', 'TILE', 'sl_gather'],
  });
}
