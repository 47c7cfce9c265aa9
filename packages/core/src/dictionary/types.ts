import type { DeviceArray } from '../device-array';
import type { Gpu } from '../gpu';

/** Key width: u32 keys, or u64 keys (two u32 words each, low word first). */
export type KeyType = 'u32' | 'u64';

/**
 * Host keys: u32 keys in a Uint32Array; u64 keys in a BigUint64Array or a Uint32Array of
 * (low, high) word pairs.
 */
export type HostKeys<K extends KeyType> = K extends 'u64' ? BigUint64Array | Uint32Array : Uint32Array;

/** Keys as a host array or a device-resident u32 array (u64 keys: two words each, low first). */
export type KeysInput<K extends KeyType> = HostKeys<K> | DeviceArray<'u32'>;

/** Values: a host Uint32Array, or a device-resident u32 array (no host round trip). */
export type ValuesInput = Uint32Array | DeviceArray<'u32'>;

/** Op codes of a mixed batch, host side: a typed array or a plain array of `Op` codes. */
export type OpsInput = Uint8Array | Uint32Array | readonly number[];

/** When an insert batch takes a table's bulk build (a partitioned build in workgroup memory). */
export type BulkInsertMode = 'auto' | 'always' | 'never';

/**
 * What a dictionary table can do beyond the core operations:
 * - 'apply': mixed batches from host arrays; 'device-apply': from device arrays;
 * - 'u64': 64-bit keys; 'resize': grows (and maybe shrinks) itself; 'bulk-insert': a bulk build path.
 */
export type DictionaryCapability = 'apply' | 'device-apply' | 'u64' | 'resize' | 'bulk-insert';

/** The options every dictionary table takes; each table adds its own and documents its defaults. */
export interface DictionaryOptions {
  /** Initial number of slots (each table rounds it to its own geometry). */
  capacity: number;
  /** Load factor (live keys / slots) that growth keeps the table under. */
  maxLoadFactor?: number;
  /** Grow automatically (default true). With false, keys that do not fit are reported in `failed`, never dropped. */
  growth?: boolean;
  /** Which insert batches take the table's bulk build, where it has one. Default 'auto'. */
  bulkInsert?: BulkInsertMode;
}

/** What an insert batch did: how many keys were new, and which could not be placed. */
export interface InsertResult {
  /** Keys that were not in the table before this batch (duplicates in the batch count once). */
  inserted: number;
  /**
   * Batch indices of the pairs that could not be placed (only without growth, in mixed batches, or
   * at the device's storage limit). Every other pair is in the table: nothing is dropped silently.
   */
  failed: Uint32Array;
}

/** What a table's host `find` returns. */
export interface FindResult {
  /** The value of each found key; 0 where `found` is 0. */
  values: Uint32Array;
  /** 1 where the key was found, else 0. */
  found: Uint8Array;
}

/**
 * Options of a host `find`: `out`, arrays to write the answers into (at least one entry per key;
 * the result then holds views of them). Reusing them across calls spares a fresh allocation per
 * call, which for large batches costs as much as the transfer (page faults of new memory).
 */
export interface FindOptions {
  out?: { values: Uint32Array; found: Uint8Array };
}

/** What a table's device-resident `find` returns: one u32 per key in each array (the caller destroys them). */
export interface DeviceFindResult {
  values: DeviceArray<'u32'>;
  found: DeviceArray<'u32'>;
}

/** A mixed batch from host arrays: one op code, key and (for inserts) value per entry. */
export interface ApplyBatch<K extends KeyType = 'u32'> {
  /** One op per entry: 0 insert, 1 insertOrAssign, 2 find, 3 erase (see `Op`). */
  ops: OpsInput;
  keys: HostKeys<K>;
  /** Values for the insert ops (ignored for finds and erases); same length as keys. */
  values?: Uint32Array;
}

/** A mixed batch already on the device: u32 op codes, keys and (optional) values, one each per op. */
export interface DeviceApplyBatch {
  ops: DeviceArray<'u32'>;
  keys: DeviceArray<'u32'>;
  values?: DeviceArray<'u32'>;
}

/** What `Dictionary.apply` returns for a host batch: a value and a status per op, in op order. */
export interface ApplyResult {
  /** For finds: the value found (0 if none); 0 for the other ops. */
  values: Uint32Array;
  /** 1 when the op took effect: insert = new key added, find = found, erase = key erased. */
  status: Uint8Array;
  /** Indices of inserts that could not be placed (see InsertResult.failed). */
  failed: Uint32Array;
}

/** What `Dictionary.apply` returns for a device batch: the answers stay on the GPU. */
export interface DeviceApplyResult {
  /** (value, status) per op, as ApplyResult's values and status, interleaved: 2n u32s (the caller destroys it). */
  out: DeviceArray<'u32'>;
  /** Indices of inserts that could not be placed. */
  failed: Uint32Array;
}

/** Every live pair, in no particular order. */
export interface RetrieveResult<K extends KeyType = 'u32'> {
  keys: K extends 'u64' ? BigUint64Array : Uint32Array;
  values: Uint32Array;
}

/** The statistics every dictionary table reports; each table's `stats()` adds its own. */
export interface DictionaryStats {
  capacity: number;
  /** Live keys, counted on the GPU. */
  size: number;
  loadFactor: number;
}

/** What `sync()` reads back. */
export interface SyncResult {
  /** Live keys. */
  size: number;
  /** Batch indices the last encoded batch could not place (as InsertResult.failed). */
  failed: Uint32Array;
  /** Batch indices it refused: reserved keys, or op codes out of range. */
  refused: Uint32Array;
}

/** Options of a device-side insert. */
export interface EncodeInsertOptions {
  /** Overwrite the values of keys already present (insertOrAssign). */
  assign?: boolean;
  /** Timestamps spanning the whole insert (first pass's beginning, last pass's end). */
  timestampWrites?: GPUComputePassTimestampWrites;
}

/**
 * The device-side API (cuCollections' ref): each `encode*` records passes into the caller's
 * encoder and returns at once; the table never resizes there, and failures land in the device's
 * failed list (read by the next host operation, or `sync()`).
 *
 * Rules: submit the encoder before the next host operation on the table (which may reallocate
 * it); an encode while a host operation is pending throws TableBusyError; encodes never
 * invalidate earlier encodes (scratch a later encode outgrows is retired, not destroyed).
 */
export interface DeviceDictionary {
  encodeClear(encoder: GPUCommandEncoder): void;
  encodeInsert(encoder: GPUCommandEncoder, keys: GPUBuffer, values: GPUBuffer, n: number, options?: EncodeInsertOptions): unknown;
  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void;
  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void;
  /** A mixed batch; `out` receives (value, status) per op. */
  encodeApply?(
    encoder: GPUCommandEncoder,
    ops: GPUBuffer,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    out: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void;
  /** Sizes per-batch scratch for batches of up to n keys ahead of time (a performance hint). */
  reserveBatch(n: number): void;
}

/**
 * The one contract every gpuhash dictionary table implements (linear-probe, hive, slab, horton):
 * what the bench, the docs, the tests and users program against.
 *
 * Host operations on one table run in call order; each resolves when its results (or the table's
 * new size) are back on the host.
 */
export interface Dictionary<K extends KeyType = 'u32'> extends DeviceDictionary {
  readonly gpu: Gpu;
  readonly keyType: K;
  readonly capabilities: ReadonlySet<DictionaryCapability>;
  readonly capacity: number;
  /** Live keys as of the last host operation (device-side encodes leave it stale until the next one, or `sync()`). */
  readonly size: number;
  readonly loadFactor: number;
  readonly isDestroyed: boolean;
  /**
   * Inserts pairs; a key already present keeps its value. Duplicates in a batch: one of their values is stored.
   *
   * @example
   * ```ts
   * const { inserted, failed } = await table.insert(new Uint32Array([17, 42]), new Uint32Array([1, 2]));
   * // inserted: 2 new keys; failed: indices of keys that could not be placed (empty unless the table is full)
   * ```
   */
  insert(keys: KeysInput<K>, values: ValuesInput): Promise<InsertResult>;
  /** Inserts pairs, overwriting the value of keys already present. */
  insertOrAssign(keys: KeysInput<K>, values: ValuesInput): Promise<InsertResult>;
  /**
   * Host keys give host results; device keys give device-resident results.
   *
   * @example
   * ```ts
   * const { values, found } = await table.find(new Uint32Array([42, 5]));
   * // values[i] is the value of keys[i] (0 if absent); found[i] is 1 if present, else 0
   * ```
   */
  find(keys: HostKeys<K>, options?: FindOptions): Promise<FindResult>;
  find(keys: DeviceArray<'u32'>): Promise<DeviceFindResult>;
  /** 1 for each key present, else 0. */
  contains(keys: HostKeys<K>): Promise<Uint8Array>;
  /**
   * Erases keys; returns how many were present.
   *
   * @example
   * ```ts
   * const erased = await table.erase(new Uint32Array([17, 5])); // 1 if only 17 was present
   * ```
   */
  erase(keys: KeysInput<K>): Promise<number>;
  /**
   * A mixed batch, every op concurrent with the others: host arrays give host results (tables with
   * the 'apply' capability), device arrays device results ('device-apply').
   *
   * @example
   * ```ts
   * import { Op } from '@gpuhash/core';
   *
   * const { values, status } = await table.apply!({
   *   ops: new Uint8Array([Op.insert, Op.find, Op.erase]),
   *   keys: new Uint32Array([7, 42, 17]),
   *   values: new Uint32Array([70, 0, 0]),
   * });
   * // status[i]: 1 when op i succeeded (inserted, found, erased); values[1] is the value of 42
   * ```
   */
  apply?: {
    (batch: ApplyBatch<K>): Promise<ApplyResult>;
    (batch: DeviceApplyBatch): Promise<DeviceApplyResult>;
  };
  clear(): Promise<void>;
  retrieveAll(): Promise<RetrieveResult<K>>;
  stats(): Promise<DictionaryStats>;
  /**
   * Reads the size back after device-side encodes (submit them first), with the failed list of
   * the last encoded insert, erase or mixed batch: what it could not place, or refused.
   */
  sync(): Promise<SyncResult>;
  /** Frees the table's GPU memory once pending operations settle; later calls throw DestroyedError. */
  destroy(): void;
}
