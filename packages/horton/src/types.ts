import type { DictionaryOptions, DictionaryStats } from '@gpuhash/core';

/** 'horton': Horton table (Type A and Type B buckets, remap entries); 'bcht': the plain bucketized cuckoo baseline. */
export type HortonMode = 'horton' | 'bcht';

export interface HortonOptions extends DictionaryOptions {
  /** Initial number of slots; rounded up to a power-of-two number of 8-slot buckets (at least 64 slots). */
  capacity: number;
  /**
   * 'horton' (default): a key lives in its primary bucket or, through its bucket's remap entry, in
   * one secondary bucket. 'bcht': the paper's baseline, a bucketized cuckoo hash table with two
   * choices per key and load-balancing placement (Type A buckets only).
   */
  mode?: HortonMode;
  /**
   * Load factor (live keys / slots) that growth keeps the table under. Default 0.9. Builds reach
   * about 0.95 (see the README); past that inserts start to fail and, with growth, rebuild.
   */
  maxLoadFactor?: number;
  /** Grow automatically (default true). With false, keys that do not fit are reported in `failed`, never dropped. */
  growth?: boolean;
  /**
   * After erases, move remapped keys back into the free slots of their primary bucket and turn a
   * bucket whose remap entries are all unused back into Type A (default true). Horton mode only.
   */
  repatriate?: boolean;
}

export interface HortonStats extends DictionaryStats {
  mode: 'horton' | 'bcht';
  buckets: number;
  /** Share of buckets that are Type B (0 in BCHT mode). */
  typeBShare: number;
  /** Share of live keys stored outside their primary bucket (BCHT mode: in their second bucket). */
  remappedShare: number;
  /** Primary keys pushed out of their bucket for a secondary key (`HortonTable.primaryPushes`). */
  primaryPushes: number;
  /** Buckets a lookup of a present key reads, measured by the counting lookup over every live key. */
  bucketsPerHit: number;
  /** Buckets a lookup of an absent key reads, measured by the counting lookup over `missSample` random absent keys. */
  bucketsPerMiss: number;
  /** Random keys the miss measurement looked up (those that were present count as neither). */
  missSample: number;
  /** Rebuilds so far (growth, new hash seeds). */
  rehashes: number;
}

/** What `lookupCost` measured: buckets read by the lookups of a batch, counted on the GPU. */
export interface LookupCost {
  hits: number;
  misses: number;
  /** Buckets per lookup of the keys found (0 when none was). */
  bucketsPerHit: number;
  /** Buckets per lookup of the keys not found (0 when every key was). */
  bucketsPerMiss: number;
}
