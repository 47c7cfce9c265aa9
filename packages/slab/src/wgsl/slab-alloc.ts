import { atomicHelpers, cooperativeVariantModule, fmix32Module, type WgslModule } from '@gpuhash/kernels';
import { layoutModule } from './layout';

/** Resident-block changes an allocation tries before it reports the pool exhausted. */
export const MAX_RESIDENT_CHANGES = 32;

/**
 * SlabAlloc (the paper's §V), warp-synchronous: the pool is super blocks of memory blocks, each of
 * 32·block_words slabs with a bitmap of block_words words (`bitmap`). Each cooperative group keeps
 * a resident block (private, group-uniform) and serves its allocations from it: its lanes read
 * the block's bitmap words, the first lane whose word has a clear bit claims it with one atomicOr
 * (the paper's CAS; an OR cannot fail because of other bits changing), and the slab index is
 * broadcast. A full resident block is replaced by one chosen with two hashes of (group, changes),
 * over every super block the pool has now; after MAX_RESIDENT_CHANGES the allocation reports the
 * pool exhausted (NONE), and the host grows the pool and reruns the insert.
 *
 * The bitmap is re-read at each allocation rather than kept in registers: an allocation is one
 * per slab filled (one in 15 inserts), and a block's words are one coalesced read.
 *
 * sa_init(group) once per invocation (group: a global group id); sa_allocate() and sa_free(s) by
 * the whole group (sa_free by one lane). Slab indices are pool_base + unit.
 */
const ALLOC_CODE = /* wgsl */ `
const SA_MAX_RESIDENT_CHANGES: u32 = ${MAX_RESIDENT_CHANGES}u;

var<private> sa_group: u32;
var<private> sa_resident: u32 = 0xffffffffu;
var<private> sa_changes: u32 = 0u;

fn sa_init(group: u32) { sa_group = group; }

/** The next resident block: super block by one hash, memory block by another, of (group, changes). */
fn sa_pick_block() -> u32 {
  let h1 = hash_fmix32(sa_group * 0x9e3779b9u + sa_changes * 0x7f4a7c15u + params.salt);
  let h2 = hash_fmix32(h1 ^ 0x5bd1e995u);
  sa_changes += 1u;
  return (h1 % params.super_blocks) * params.blocks_per_super + (h2 % params.blocks_per_super);
}

/** Allocates one pool slab for the group: its index, or NONE when the pool looks exhausted. */
fn sa_allocate() -> u32 {
  let g = cg_size();
  for (var tries = 0u; tries <= SA_MAX_RESIDENT_CHANGES; tries++) {
    if (sa_resident == NONE) { sa_resident = sa_pick_block(); }
    let first_word = sa_resident * params.block_words;
    for (var w0 = 0u; w0 < params.block_words; w0 += g) {
      let w = w0 + cg_lane();
      // The slabs this word covers that the pool has (all 32 but in a pool smaller than a block).
      let unit0 = (first_word + w) * 32u;
      var allowed = 0u;
      if (w < params.block_words && unit0 < params.pool_units) {
        allowed = select(0xffffffffu, (1u << (params.pool_units - unit0)) - 1u, params.pool_units - unit0 < 32u);
      }
      var bits = 0xffffffffu;
      if (allowed != 0u) { bits = atomicLoad(&bitmap[first_word + w]); }
      var lanes = cg_ballot32((allowed & ~bits) != 0u);
      loop {
        if (lanes == 0u) { break; }
        let l = firstTrailingBit(lanes);
        var got = NONE;
        if (cg_lane() == l) {
          let bit = bm_claim_lowest(first_word + w, allowed);
          if (bit >= 0i) { got = (first_word + w) * 32u + u32(bit); }
        }
        let unit = cg_broadcast(got, l);
        if (unit != NONE) {
          if (cg_lane() == 0u) { count(T_ALLOCATED, 1u); }
          return params.pool_base + unit;
        }
        lanes &= lanes - 1u;
      }
    }
    // The resident block is full: move to another.
    sa_resident = NONE;
  }
  return NONE;
}

/** Returns a pool slab to its block (one lane). The slab must be all EMPTY again before this. */
fn sa_free(s: u32) {
  let unit = s - params.pool_base;
  if (bm_release_bit(unit / 32u, unit % 32u)) { count(T_RELEASED, 1u); }
}
`;

export function slabAllocModule(subgroups: boolean, tallies: WgslModule): WgslModule {
  return cooperativeVariantModule('slab.alloc', subgroups, ALLOC_CODE, {
    requires: [layoutModule, fmix32Module, atomicHelpers('bitmap', 'bm'), tallies],
    needs: ['params', 'bitmap'],
  });
}
