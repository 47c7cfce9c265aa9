import type { ParamValues } from '@gpuhash/core';

/** Invocations per workgroup of every slab kernel: a multiple of every subgroup size. */
export const WORKGROUP_SIZE = 256;

/**
 * The `Params` uniform every slab kernel binds: n, the batch size (or the items of a pass over the
 * table); use_sel, 1 when the batch is the subset of an earlier batch that `sel` names (a rerun of
 * the inserts that found the pool exhausted); buckets, B; hash_a, hash_b, the universal hash's
 * coefficients; pool_base, the index of the first pool slab (= B: base slabs come first);
 * super_blocks, blocks_per_super, block_words, pool_units, the SlabAlloc geometry (pool_units:
 * the slabs the pool has, fewer than its blocks span only in a pool smaller than one block); max_hops, the longest chain
 * a walk follows (the slab count: chains never cycle, the bound only makes that checkable); salt,
 * varies per dispatch so groups start at different resident blocks.
 */
export const slabParams = {
  n: 'u32',
  use_sel: 'u32',
  buckets: 'u32',
  hash_a: 'u32',
  hash_b: 'u32',
  pool_base: 'u32',
  super_blocks: 'u32',
  blocks_per_super: 'u32',
  block_words: 'u32',
  pool_units: 'u32',
  max_hops: 'u32',
  salt: 'u32',
} as const;

export type SlabParams = typeof slabParams;
export type SlabParamValues = ParamValues<SlabParams>;

/** Words of the counters buffer. */
export const Counter = {
  /** Live entries (keys in map and set mode, pairs in multimap mode). */
  size: 0,
  /** Erased slots still taking room (unique-key modes), until `flush`. */
  tombstones: 1,
  /** Pool slabs allocated (linked into chains). */
  slabs: 2,
  /** Inserts of the last batch that found no slab to allocate (the pool is exhausted). */
  exhausted: 3,
} as const;
export const COUNTER_WORDS = 4;
