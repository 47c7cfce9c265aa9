import type { DeviceArray } from '@gpuhash/core';

/** Key width: 'u32' (8-byte slots) or 'u64' (16-byte slots, every 64-bit value allowed). */
export type KeyType = 'u32' | 'u64';

export interface LinearProbeOptions<K extends KeyType = KeyType> {
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
   * that finds no room within it fails (reported, or the table grows); every key therefore lies
   * within this many slots of its home, which bounds lookups too.
   */
  maxProbes?: number;
  /**
   * Large insert batches into u32 tables without tombstones can build the table region by region
   * in workgroup memory instead of with global atomics (see the README). 'auto' (default) takes
   * that path on hardware adapters for batches of at least 2^15 keys and capacity/8 that leave the
   * load at most 0.8;
   * 'always' and 'never' force the choice.
   */
  bulkInsert?: 'auto' | 'always' | 'never';
}

/** Values: a host array, or a device-resident array (no host round trip). */
export type U32Input = Uint32Array | DeviceArray<'u32'>;

/**
 * Host keys: u32 keys in a Uint32Array; u64 keys in a BigUint64Array or a Uint32Array of
 * (low, high) word pairs.
 */
export type HostKeys<K extends KeyType> = K extends 'u64' ? BigUint64Array | Uint32Array : Uint32Array;

/** Keys as a host array or a device-resident u32 array (u64 keys: two words each, low first). */
export type KeysInput<K extends KeyType> = HostKeys<K> | DeviceArray<'u32'>;

export interface InsertResult {
  /** Keys that were not in the table before this batch (duplicates in the batch count once). */
  inserted: number;
  /**
   * Batch indices of the pairs that could not be placed within the probe bound (only without
   * growth, or in mixed batches): nothing is dropped silently.
   */
  failed: Uint32Array;
}

export type { DeviceFindResult, FindResult } from '@gpuhash/core';

export interface ApplyBatch<K extends KeyType = KeyType> {
  /** One op per entry: 0 insert, 1 insertOrAssign, 2 find, 3 erase (see `Op`). */
  ops: Uint8Array | Uint32Array;
  keys: HostKeys<K>;
  /** Values for the insert ops (ignored for finds and erases); same length as keys. */
  values?: Uint32Array;
}

export interface ApplyResult {
  /** For finds: the value found (0 if none); 0 for the other ops. */
  values: Uint32Array;
  /** 1 when the op took effect: insert = new key added, find = found, erase = key erased. */
  status: Uint8Array;
  /** Indices of inserts that could not be placed within the probe bound. */
  failed: Uint32Array;
}

export interface TableStats {
  capacity: number;
  size: number;
  tombstones: number;
  loadFactor: number;
  /** Slots a successful lookup reads, on average over the live keys (1 = every key in its home slot). */
  averageProbeLength: number;
  /** Slots the longest successful lookup reads. */
  maxProbeLength: number;
  maxProbes: number;
  /** Rehashes so far (growth, rehash(), shrink). */
  rehashes: number;
}
