import type { ParamValues } from '@gpuhash/core';

/**
 * The `Params` uniform every Hive kernel binds (the common module reads it). n: items of this
 * dispatch; n0, split: linear hashing round and split pointer; nalloc: table buckets allocated
 * (the stash starts there); lock_base: masks word of bucket 0's lock; list_cap: entries per list;
 * max_evict: cuckoo path bound; mode and aux: per kernel (aux1: first batch index of an op pass's
 * chunk). The dispatcher fills the geometry from the table's state.
 */
export const hiveParams = {
  n: 'u32',
  n0: 'u32',
  split: 'u32',
  nalloc: 'u32',
  stash_lines: 'u32',
  lock_base: 'u32',
  list_cap: 'u32',
  max_evict: 'u32',
  mode: { type: 'u32', default: 0 },
  aux0: { type: 'u32', default: 0 },
  aux1: { type: 'u32', default: 0 },
  aux2: { type: 'u32', default: 0 },
} as const;

export type HiveParams = typeof hiveParams;
export type HiveParamValues = ParamValues<HiveParams>;
