import type { DictionaryOptions, DictionaryStats } from '@gpuhash/core';

export interface HiveOptions extends DictionaryOptions {
  /** Initial number of slots; rounded up to whole 32-slot buckets (at least one). */
  capacity: number;
  /**
   * Upper load threshold (live keys / table slots). Before an insert batch that could pass it, the
   * table expands by linear-hashing splits until the batch fits under it. Default 0.9 (the paper's).
   */
  maxLoadFactor?: number;
  /**
   * Lower load threshold. After erases leave the load below it, the table contracts by merges
   * towards the midpoint of the two thresholds, never below the capacity it was created or last
   * reserved/shrunk with. Default 0.35; must be below maxLoadFactor.
   */
  minLoadFactor?: number;
  /** Resize automatically (default true). With false, keys that do not fit are reported, never dropped. */
  growth?: boolean;
  /** Buckets split or merged per resize dispatch (Hive's K-bucket batches). Default 4096. */
  resizeBatch?: number;
  /** Longest cuckoo eviction path (victims moved for one insert), 1..16. Default 8. */
  maxEvictions?: number;
  /**
   * Use WGSL subgroups for the cooperative groups (default: when the device has the feature).
   * false forces the fallback where every invocation is a group of one lane.
   */
  subgroups?: boolean;
  /**
   * Insert batches by the bulk build (partitioned by region, each region built in workgroup memory;
   * see the README). 'auto' (default): batches of at least 2^15 keys and 1/16 of the capacity, on a
   * hardware adapter; 'always': every insert batch the device's limits allow (tests use it on
   * SwiftShader); 'never': always the op passes. Mixed batches (`apply`) never take it.
   */
  bulkInsert?: 'auto' | 'always' | 'never';
  /**
   * @internal Batch entries per op pass (default 2^22): larger batches run in chunks, which bounds
   * the per-batch scratch lists. Tests lower it to exercise the chunking.
   */
  opChunk?: number;
  /**
   * @internal Test-only: buckets per window of the slots (a power of two). A table whose buckets
   * and stash exceed it keeps its slots in several storage bindings, as tables past one binding
   * do on a GPU (2^22 buckets a window on an H100).
   */
  windowBuckets?: number;
  /**
   * @internal Test-only: keys of one part of a bulk build (a multiple of 64). Larger batches build
   * part after part, as batches whose records exceed one binding do on a GPU (2^27 - 64 keys).
   */
  bulkPartKeys?: number;
  /**
   * @internal Test-only: whether finds take their batch in window order ('auto': batches of 2^16
   * keys or more over more than 2 GiB of slots), and bulk builds their spilled keys ('auto': the
   * same, when the build runs with its overflow plan; 'always': whenever the slots are split).
   */
  windowOrder?: 'auto' | 'always' | 'never';
}

export interface HiveStats extends DictionaryStats {
  /** Table slots (buckets x 32; the stash is not counted); size counts the stash too. */
  capacity: number;
  buckets: number;
  /** Buckets the storage holds before it must be reallocated. */
  allocatedBuckets: number;
  /** Linear hashing: buckets at the start of the round (a power of two) and the split pointer. */
  roundBuckets: number;
  splitPointer: number;
  fullBuckets: number;
  /** Keys in the overflow stash, its capacity in slots, and stash keys / stash capacity. */
  stashSize: number;
  stashCapacity: number;
  stashLoad: number;
  /** Keys ever placed in the stash. */
  stashedTotal: number;
  /** Inserts that needed the locked path (both buckets full when first tried). */
  lockedInserts: number;
  /** Victims moved by cuckoo eviction. */
  evictions: number;
  /**
   * Lock acquisitions by the locked pass (an op's two candidate buckets count once, each bucket of a
   * cuckoo path once more), and attempts that found a lock taken (and retried later).
   */
  lockAcquisitions: number;
  lockConflicts: number;
  /** Resize dispatches so far: split batches, merge batches; buckets split and merged. */
  expansions: number;
  contractions: number;
  bucketsSplit: number;
  bucketsMerged: number;
  /** Storage reallocations (growth past the allocation, shrinkToFit). */
  reallocations: number;
}
