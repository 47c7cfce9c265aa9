import { cooperativeVariantModule, universalModule, type WgslModule, wgslModule } from '@gpuhash/kernels';
import { layoutModule } from './layout';

/**
 * How a kernel reads slab cells: 'atomic' through the read-write `slabs` binding (kernels that
 * write the table, where other groups write concurrently), 'plain' through `slabs_ro`, the same
 * buffer bound read-only as `array<vec2<u32>>` (lookup kernels: plain loads go through the L1
 * cache, atomic loads do not).
 */
export type SlabRead = 'atomic' | 'plain';

const readModules: Record<SlabRead, WgslModule> = {
  atomic: wgslModule(
    'slab.read.atomic',
    /* wgsl */ `
fn sl_cell(s: u32, c: u32) -> vec2<u32> {
  let w = s * 32u + 2u * c;
  return vec2<u32>(atomicLoad(&slabs[w]), atomicLoad(&slabs[w + 1u]));
}
/** Cell c without its value word (map and multimap updates read keys and the next word only). */
fn sl_cell_keys(s: u32, c: u32) -> vec2<u32> {
  let w = s * 32u + 2u * c;
  var y = 0u;
  if (SET_MODE || c == NEXT_CELL) { y = atomicLoad(&slabs[w + 1u]); }
  return vec2<u32>(atomicLoad(&slabs[w]), y);
}`,
    { needs: ['slabs', 'SET_MODE'] },
  ),
  plain: wgslModule(
    'slab.read.plain',
    `fn sl_cell(s: u32, c: u32) -> vec2<u32> { return slabs_ro[s * 16u + c]; }
fn sl_cell_keys(s: u32, c: u32) -> vec2<u32> { return slabs_ro[s * 16u + c]; }`,
    { needs: ['slabs_ro'] },
  ),
};

/**
 * The cooperative read of one slab (the paper's ReadSlab plus its ballots): the group's TILE
 * lanes (a constant of the kernel: 1..16, a power of two, no more than the subgroup) read the 16
 * cells in SL_STEPS = 16 / TILE steps, cell j·TILE + lane at step j, and ballot over them. One call answers, for one key and the whole group:
 * - key_word: the word holding k (the first, in word order), or NONE; key_value: its value word
 *   (map and multimap mode);
 * - free_word: the first word that is EMPTY (or TOMBSTONE, with `reuse`), or NONE;
 * - busy: whether any key word is BUSY (an insert publishing inside a mixed batch);
 * - next: the next-slab word (EMPTY_POINTER at a chain's end).
 * `stop_at_key` ends the read at the step that finds k (next is then not read).
 */
const SCAN_CODE = /* wgsl */ `
const SL_STEPS: u32 = SLAB_CELLS / TILE;

struct SlabScan { key_word: u32, key_value: u32, free_word: u32, busy: bool, next: u32 }

/** The bucket of k: the paper's universal hash ((a·k + b) mod p) mod B. Each lane hashes its own key, once, before the WCWS loop. */
fn sl_bucket(k: u32) -> u32 { return hash_universal(k, params.hash_a, params.hash_b, params.buckets); }

fn sl_is_free(w: u32, reuse: bool) -> bool { return w == EMPTY_KEY || (reuse && w == TOMBSTONE_KEY); }

fn sl_scan(s: u32, k: u32, want_key: bool, want_value: bool, want_free: bool, reuse: bool, want_busy: bool, stop_at_key: bool) -> SlabScan {
  var r = SlabScan(NONE, 0u, NONE, false, EMPTY_POINTER);
  // Every load of the lane first, then the ballots: the loads of one slab are independent, so
  // they are in flight together rather than one step at a time.
  var cells: array<vec2<u32>, SL_STEPS>;
  for (var j = 0u; j < SL_STEPS; j++) {
    let c = j * TILE + cg_lane();
    if (want_value) { cells[j] = sl_cell(s, c); } else { cells[j] = sl_cell_keys(s, c); }
  }
  for (var j = 0u; j < SL_STEPS; j++) {
    let c0 = j * TILE;
    let c = c0 + cg_lane();
    let cell = cells[j];
    let ka = sl_key_a(c);
    let kb = sl_key_b(c);
    if (want_key && r.key_word == NONE) {
      let ma = cg_ballot32(ka && cell.x == k);
      // Second words hold keys only in a set (a constant branch: one ballot in map mode).
      var mb = 0u;
      if (SET_MODE) { mb = cg_ballot32(kb && cell.y == k); }
      if ((ma | mb) != 0u) {
        r.key_word = sl_first_word(ma, mb, c0);
        // Map and multimap: the key is in a first word, its value beside it in the same lane.
        if (want_value && !SET_MODE) { r.key_value = cg_broadcast(cell.y, firstTrailingBit(ma)); }
        if (stop_at_key) { break; }
      }
    }
    if (want_free && r.free_word == NONE) {
      let fa = cg_ballot32(ka && sl_is_free(cell.x, reuse));
      var fb = 0u;
      if (SET_MODE) { fb = cg_ballot32(kb && sl_is_free(cell.y, reuse)); }
      r.free_word = sl_first_word(fa, fb, c0);
    }
    if (want_busy) {
      r.busy = r.busy || cg_any((ka && cell.x == BUSY_KEY) || (kb && cell.y == BUSY_KEY));
    }
    // The last step holds cell 15, whose second word is the next-slab index.
    if (j + 1u == SL_STEPS) { r.next = cg_broadcast(cell.y, NEXT_CELL - c0); }
  }
  return r;
}
`;

/** `sl_scan` and `sl_bucket` over the chosen read, for the chosen cooperative variant. */
export function scanModule(read: SlabRead, subgroups: boolean): WgslModule {
  return cooperativeVariantModule(`slab.scan.${read}`, subgroups, SCAN_CODE, {
    requires: [layoutModule, universalModule, readModules[read]],
    needs: ['params', 'TILE'],
  });
}
