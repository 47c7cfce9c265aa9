import type { DeviceArray } from '@gpuhash/core';

/**
 * How a slot's score is set (larger is more important; the minimum of a full bucket is evicted):
 * - `lru`: the cache's logical clock, the sequence number of the operation on the key (advanced by
 *   one per key of every insert-like batch; a later key in a batch is more recent).
 * - `lfu`: a frequency; a new key stores its increment (the `scores` argument, or 1), a hit adds
 *   it, saturating at 2^64 - 1.
 * - `epochLru`: the global epoch in the high word, the clock's low 32 bits in the low word.
 * - `epochLfu`: the global epoch in the high word, a frequency in the low word (saturating at
 *   2^32 - 1; a hit in a later epoch starts counting again).
 * - `custom`: the caller's scores, with admission control: a new key whose score is below its
 *   full bucket's minimum is refused.
 */
export type ScorePolicy = 'lru' | 'lfu' | 'epochLru' | 'epochLfu' | 'custom';

/** Options of `HkvCache.create`. */
export interface HkvOptions {
  /** Slots to start with (rounded up to a power-of-two number of 128-slot buckets). */
  capacity: number;
  /** Floats per value vector, 1..1024. */
  dim: number;
  /** Slots it may grow to (`reserve`, and automatic growth past `maxLoadFactor`); default `capacity`: pure cache mode. */
  maxCapacity?: number;
  /** Load factor that triggers growth before an insert while below `maxCapacity`. Default 0.5 (as NVIDIA's library). */
  maxLoadFactor?: number;
  /** The score policy. Default 'lru'. */
  policy?: ScorePolicy;
  /**
   * 'single' (default): a key's one bucket. 'dual': two candidate buckets per key, the less loaded
   * while either has room, then the one with the lower minimum score (the first eviction comes near
   * load 1 instead of about 0.65; finds read two digest lines). Dual mode has a fixed capacity (no
   * growth or reserve) of at least two buckets.
   */
  mode?: 'single' | 'dual';
  /**
   * Skip the duplicate-key pass of insert batches when every batch is known to hold distinct keys
   * (as NVIDIA's library assumes). A batch with duplicates then may store a key twice. Default false.
   */
  assumeUniqueKeys?: boolean;
  /**
   * Largest value buffer in bytes (default: the device's binding and buffer limits). Values beyond
   * it are split across several buffers; set it small to exercise the split.
   */
  maxValueBufferBytes?: number;
  /**
   * Most bytes of values one pass touches (default 2 GiB, or 4 GiB when a vector is 256 bytes or
   * more: dim 64 and up). Random accesses spread over more memory
   * than the GPU's address translation covers run many times slower (on an H100, a find over 8 GiB of
   * dim-32 values took 15x longer per key than over 4 GiB), so larger value sets are visited in
   * windows: the main pass serves the first window and records slots, a partition lists the keys of
   * each other window, and one copy pass per window moves their vectors.
   */
  valueWindowBytes?: number;
  /**
   * GPU memory budget for the values (bytes, whole buckets). The values of the slots past it live in
   * host memory, staged through readbacks: the GPU finds the slots, the host gathers and scatters
   * (WebGPU cannot map storage buffers). A cache with a host tier has a fixed capacity and no `encode*`.
   * Default: every value on the GPU.
   */
  maxDeviceBytesForValues?: number;
  /**
   * Cooperative kernels: a group of subgroup lanes looks up, updates and inserts one key at a time,
   * each lane reading its share of the bucket's digest line and scores (default: whenever the device
   * has subgroups). false: one invocation per key (the path for devices without subgroups).
   */
  subgroups?: boolean;
  /**
   * Lanes per group with subgroups: 1, 2, 4, 8, 16 or 32 (default 4: each lane reads 32 bytes of the
   * 128-byte digest line), capped at the device's smallest subgroup. It applies to every pass.
   */
  tile?: number;
}

/** Keys: a `BigUint64Array`, a `Uint32Array` of (low, high) word pairs, or such pairs on the device. */
export type KeysInput = BigUint64Array | Uint32Array | DeviceArray<'u32'>;
/** Values: `n * dim` floats, row after row. */
export type ValuesInput = Float32Array | DeviceArray<'f32'>;
/** Scores: one u64 per key, as a `BigUint64Array` or (low, high) word pairs. */
export type ScoresInput = BigUint64Array | Uint32Array | DeviceArray<'u32'>;

/**
 * One device-resident insertOrAssign batch: keys as (lo, hi) word pairs, `n * dim` values, scores
 * as word pairs (the custom policy), and where the statuses and slots go (`4 + 2n` words; a slot is
 * written for keys updated, inserted or evicted).
 */
export interface DeviceUpsertBatch {
  keys: DeviceArray<'u32'>;
  values: DeviceArray<'f32'>;
  scores?: DeviceArray<'u32'>;
  out?: DeviceArray<'u32'>;
}

/** What happened to each key of an insert-like batch (`status[i]`). */
export const HkvStatus = {
  /** Not handled (a device batch's reserved key, or an op that left it alone). */
  none: 0,
  /** The key was present: its value and/or score were updated. */
  updated: 1,
  /** Stored in a free slot. */
  inserted: 2,
  /** Stored in the place of the bucket's minimum-score key (reported by insertAndEvict). */
  evicted: 3,
  /** Refused by admission control: its score was below its full bucket's minimum. */
  refused: 4,
  /** Not stored: its bucket stayed contended through every retry (never seen in practice; report it). */
  busy: 5,
  /** A later occurrence of the same key in the batch was applied instead (the last one wins). */
  duplicate: 6,
  /** A reserved key (device batches only; host batches throw ReservedKeyError). */
  reserved: 7,
  /** assign*: the key was absent, nothing changed. */
  missing: 8,
  /** accumOrAssign: an accumulate for an absent key, or an assign for a present one: ignored. */
  ignored: 9,
  /** findOrInsert: the key was present (its value was returned). */
  found: 10,
} as const;
export type HkvStatusCode = (typeof HkvStatus)[keyof typeof HkvStatus];

/** The result of insertOrAssign, findOrInsert, accumOrAssign and the assign family. */
export interface UpsertResult {
  /** Keys stored in free slots. */
  inserted: number;
  /** Keys that were present and were updated. */
  updated: number;
  /** Keys stored in the place of another key (that key was evicted). */
  evicted: number;
  /** Batch indices of the keys admission control refused. */
  refused: Uint32Array;
  /** One `HkvStatus` per key. */
  status: Uint8Array;
}

/** insertAndEvict's result: the evicted entries, compacted (in no particular order). */
export interface EvictResult extends UpsertResult {
  evictedKeys: BigUint64Array;
  /** `evictedKeys.length * dim` floats. */
  evictedValues: Float32Array;
  evictedScores: BigUint64Array;
}

/** find's result. */
export interface FindResult {
  /** `n * dim` floats (zeros for missing keys). */
  values: Float32Array;
  /** 1 where the key was found. */
  found: Uint8Array;
  /** The scores (0 for missing keys), when asked for. */
  scores?: BigUint64Array;
}

/** Entries read out of the cache (exportBatch, exportBatchIf). */
export interface ExportResult {
  keys: BigUint64Array;
  values: Float32Array;
  scores: BigUint64Array;
}

/**
 * Which entries eraseIf and exportBatchIf take (all conditions hold): `(key & keyMask) ===
 * keyValue` (defaults take every key) and `scoreMin <= score <= scoreMax`.
 */
export interface EntryPredicate {
  keyMask?: bigint;
  keyValue?: bigint;
  scoreMin?: bigint;
  scoreMax?: bigint;
}

/** Statistics of the cache (one readback). */
export interface HkvStats {
  capacity: number;
  size: number;
  loadFactor: number;
  buckets: number;
  dim: number;
  policy: ScorePolicy;
  /** Value buffers and slots per buffer. */
  valueBuffers: number;
  slotsPerValueBuffer: number;
}
