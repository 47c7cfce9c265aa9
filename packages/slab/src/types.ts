import type { DictionaryOptions, DictionaryStats } from '@gpuhash/core';

/** Options of every slab table. `capacity` is the number of keys expected: it sizes the buckets and the first pool. */
export interface SlabOptions extends DictionaryOptions {
  /**
   * Buckets (base slabs). Default: capacity / (M · targetChainLength), M the entries per slab (15
   * pairs, or 31 keys in a set): the paper's choice of B from a target β.
   */
  buckets?: number;
  /** The paper's β, the average slabs per bucket the table is sized for when `buckets` is not given. Default 0.7. */
  targetChainLength?: number;
  /**
   * Cooperative groups are subgroup tiles (default: whenever the device has subgroups); false: each
   * invocation is a group of one that reads a slab in 16 steps.
   */
  subgroups?: boolean;
  /** Lanes per cooperative group: 1, 2, 4, 8 or 16 (default 4: measured fastest on an H200), capped at the smallest subgroup size. */
  tile?: number;
  /**
   * Slabs to preallocate in the pool (default: what `capacity` keys are expected to need, over
   * maxLoadFactor). The pool grows from there when growth is on.
   */
  poolSlabs?: number;
  /** Seed of the universal hash's coefficients (default fixed, so runs are reproducible). */
  seed?: number;
}

/** What a slab table's `stats()` reports. `capacity` counts the entry slots of every slab, pool included. */
export interface SlabStats extends DictionaryStats {
  buckets: number;
  /** Entries per slab: 15 pairs, or 31 keys in set mode. */
  entriesPerSlab: number;
  /** Pool slabs linked into chains. */
  slabsAllocated: number;
  /** Pool slabs preallocated (in use or free). */
  poolSlabs: number;
  /** Erased slots that still take room (map and set mode), until `flush()`. */
  tombstones: number;
  /** Slabs per chain, base slab included. */
  averageChainLength: number;
  maxChainLength: number;
  /** Buckets whose chain has more than one slab. */
  overflowBuckets: number;
  /** Live entries over the entry slots of the slabs in chains: the paper's memory utilization. */
  slabUtilization: number;
  /**
   * Bytes of live entries (8 a pair, 4 a key) over the bytes of the slabs in chains: the paper's
   * memory utilization (at most 120/128 in map mode, the next word and the auxiliary word aside).
   */
  memoryUtilization: number;
  /** Bytes of slabs in chains per live entry. */
  memoryPerEntry: number;
  /** Bytes the table holds on the device: every slab (pool included), bitmaps, counters. */
  deviceBytes: number;
  /** Times the pool has grown. */
  poolGrowths: number;
}

/** What `SlabMultimap.findAll` returns: every copy's value, grouped by query. */
export interface FindAllResult {
  /** Copies of keys[i]. */
  counts: Uint32Array;
  /** Where keys[i]'s values start in `values` (an exclusive prefix sum of counts). */
  offsets: Uint32Array;
  /** Values of keys[0]'s copies, then keys[1]'s, ...; each key's in chain order. */
  values: Uint32Array;
}
