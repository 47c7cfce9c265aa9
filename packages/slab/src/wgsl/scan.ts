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
/**
 * Which cell lane l reads at its j-th load: lanes side by side (cell j·TILE + l), so each load
 * instruction of a group reads one run of adjacent words. Atomic loads bypass the L1 cache, so
 * every load instruction is a trip to L2: the group's lanes must share its sectors.
 */
fn sl_cell_index(l: u32, j: u32) -> u32 { return j * TILE + l; }
/** Cell c without its value word (map and multimap updates read keys and the next word only). */
fn sl_cell_keys(s: u32, c: u32) -> vec2<u32> {
  let w = s * 32u + 2u * c;
  var y = 0u;
  if (SET_MODE || c == NEXT_CELL) { y = atomicLoad(&slabs[w + 1u]); }
  return vec2<u32>(atomicLoad(&slabs[w]), y);
}`,
    { needs: ['slabs', 'SET_MODE', 'TILE'] },
  ),
  plain: wgslModule(
    'slab.read.plain',
    `fn sl_cell(s: u32, c: u32) -> vec2<u32> { return slabs_ro[s * 16u + c]; }
fn sl_cell_keys(s: u32, c: u32) -> vec2<u32> { return slabs_ro[s * 16u + c]; }
// Plain loads: a run of adjacent cells per lane (the first load brings the line into L1).
fn sl_cell_index(l: u32, j: u32) -> u32 { return l * SL_CELLS + j; }`,
    { needs: ['slabs_ro', 'SL_CELLS'] },
  ),
};

/**
 * The cooperative read of one slab (the paper's ReadSlab plus its ballots): the group's TILE
 * lanes (a constant of the kernel: 1..16, a power of two, no more than the subgroup) read the 16
 * cells, SL_CELLS = 16 / TILE per lane (which ones: sl_cell_index), all loads issued before any
 * is used. Each lane then looks through its own cells, and a few ballots and broadcasts combine
 * the lanes. "First" below is in the order (lane, load): the same order for every group that
 * reads this way, which is all that the first-free-slot rule of inserts needs. One call answers,
 * for one key and the whole group:
 * - key_word (with `want_key`): the word holding k (the first), or NONE; key_value (with
 *   `want_value`): its value word (map and multimap mode);
 * - free_word: the first word that is EMPTY (or TOMBSTONE, with `reuse`), or NONE;
 * - busy: whether any key word is BUSY (an insert publishing inside a mixed batch);
 * - next: the next-slab word (EMPTY_POINTER at a chain's end).
 */
const SCAN_CODE = /* wgsl */ `
const SL_CELLS: u32 = SLAB_CELLS / TILE;

struct SlabScan { key_word: u32, key_value: u32, free_word: u32, busy: bool, next: u32 }

/** The bucket of k: the paper's universal hash ((a·k + b) mod p) mod B. Each lane hashes its own key, once, before the WCWS loop. */
fn sl_bucket(k: u32) -> u32 { return hash_universal(k, params.hash_a, params.hash_b, params.buckets); }

fn sl_is_free(w: u32, reuse: bool) -> bool { return w == EMPTY_KEY || (reuse && w == TOMBSTONE_KEY); }

fn sl_scan(s: u32, k: u32, want_key: bool, want_value: bool, want_free: bool, reuse: bool, want_busy: bool) -> SlabScan {
  var cells: array<vec2<u32>, SL_CELLS>;
  for (var j = 0u; j < SL_CELLS; j++) {
    let c = sl_cell_index(cg_lane(), j);
    if (want_value) { cells[j] = sl_cell(s, c); } else { cells[j] = sl_cell_keys(s, c); }
  }
  // This lane's first key word, its value, and its first free word (cells looked at last to first).
  var key_w = NONE;
  var key_v = 0u;
  var free_w = NONE;
  var busy = false;
  for (var jj = 0u; jj < SL_CELLS; jj++) {
    let j = SL_CELLS - 1u - jj;
    let c = sl_cell_index(cg_lane(), j);
    let cell = cells[j];
    if (sl_key_b(c)) {
      if (cell.y == k) { key_w = 2u * c + 1u; }
      if (sl_is_free(cell.y, reuse)) { free_w = 2u * c + 1u; }
      busy = busy || cell.y == BUSY_KEY;
    }
    if (sl_key_a(c)) {
      if (cell.x == k) { key_w = 2u * c; key_v = cell.y; }
      if (sl_is_free(cell.x, reuse)) { free_w = 2u * c; }
      busy = busy || cell.x == BUSY_KEY;
    }
  }
  var r = SlabScan(NONE, 0u, NONE, false, EMPTY_POINTER);
  if (want_key) {
    let m = cg_ballot32(key_w != NONE);
    if (m != 0u) {
      let l = firstTrailingBit(m);
      r.key_word = cg_broadcast(key_w, l);
      if (want_value && !SET_MODE) { r.key_value = cg_broadcast(key_v, l); }
    }
  }
  if (want_free) {
    let m = cg_ballot32(free_w != NONE);
    if (m != 0u) { r.free_word = cg_broadcast(free_w, firstTrailingBit(m)); }
  }
  if (want_busy) { r.busy = cg_any(busy); }
  // The last lane's last load is cell 15 (in both cell orders), whose second word is the next-slab index.
  r.next = cg_broadcast(cells[SL_CELLS - 1u].y, TILE - 1u);
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
