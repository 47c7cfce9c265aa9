import type { DictionaryOptions, DictionaryStats, KeyType } from '@gpuhash/core';

export interface LinearProbeOptions<K extends KeyType = KeyType> extends DictionaryOptions {
  /** Initial number of slots; rounded up to a power of two (at least 64). */
  capacity: number;
  /** Default 'u32'. */
  keyType?: K;
  /**
   * Load factor (live keys / slots) above which an insert first grows the table (to the next
   * power of two that brings the load back under it). Default 0.8. Linear probing slows sharply
   * past 0.9: probe sequences grow as 1/(1-load)^2.
   */
  maxLoadFactor?: number;
  /** Grow automatically (default true). With false, keys that do not fit are reported, never dropped. */
  growth?: boolean;
  /**
   * Longest probe sequence any operation walks (default 4096, at most the capacity). An insert
   * that finds no slot within it fails (reported, or the table is rebuilt); every key therefore
   * lies within this many slots of its home, which bounds lookups too.
   */
  maxProbes?: number;
  /**
   * Large insert batches into u32 tables without tombstones can build the table region by region
   * in workgroup memory instead of with global atomics (see the README). 'auto' (default) takes
   * that path on hardware adapters for batches of at least 2^15 keys and capacity/8 that leave the
   * load at most 0.8; 'always' and 'never' force the choice.
   */
  bulkInsert?: 'auto' | 'always' | 'never';
  /**
   * @internal Test-only: tables of at least 64 x `windows` slots are split into this many storage
   * bindings (a power of two), as tables larger than one binding are on a GPU, so small tables
   * exercise the windowed kernels.
   */
  windows?: number;
  /**
   * @internal Test-only: grouped pairs per storage binding of a bulk insert (a power of two, fewer
   * than a binding holds), so small batches exercise pairs split over two bindings.
   */
  bulkPairWindow?: number;
  /**
   * @internal Test-only: whether finds take the batch in window order (window-order.ts). 'auto'
   * (default) does for batches of at least 2^16 keys over tables of more than 2 GiB of slots.
   */
  windowOrder?: 'auto' | 'always' | 'never';
}

/** Extra options of linear-probe's device-side insert. */
export interface LinearProbeInsertOptions {
  /** @internal benchmark switch: the paper's blind CAS (default) or load-then-CAS. */
  blindCas?: boolean;
  /** Overrides the table's `bulkInsert` option for this batch. */
  bulk?: 'auto' | 'always' | 'never';
}

export interface LinearProbeStats extends DictionaryStats {
  tombstones: number;
  /** Slots a successful lookup reads, on average over the live keys (1 = every key in its home slot). */
  averageProbeLength: number;
  /** Slots the longest successful lookup reads. */
  maxProbeLength: number;
  maxProbes: number;
  /** Rebuilds so far (growth, rehash(), shrink, new hash seeds). */
  rehashes: number;
}

/**
 * The statistics of a linear-probe table (`stats()`).
 *
 * @deprecated the name before 0.2; use LinearProbeStats.
 */
export type TableStats = LinearProbeStats;
