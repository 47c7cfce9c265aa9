import { type Dictionary, type DictionaryOptions, type Gpu, Op } from '@gpuhash/core';

/**
 * What a table can do, as the workloads ask for it. A workload runs on a table only when the
 * table has every capability it needs; otherwise it is skipped with a note.
 */
export type Capability = 'insert' | 'find' | 'erase' | 'mixed' | 'host' | 'alloc';

/** Op codes of mixed batches as the bench writes them: core's Op (an adapter translates if its table differs). */
export const BenchOp = { insert: Op.insert, find: Op.find, erase: Op.erase } as const;

/** Timestamp writes of one timed pass; undefined for untimed passes (warm-up, resets, rebuilds). */
export type TimestampWrites = GPUComputePassTimestampWrites | undefined;

/** Host round trips, for end-to-end time: host arrays in, upload, operate, download. */
export interface HostApi {
  clear(): Promise<void>;
  insert(keys: Uint32Array, values: Uint32Array): Promise<void>;
  /** `out`: arrays the answers go into (reused across reps, as a caller streaming batches would). */
  find(keys: Uint32Array, out?: { values: Uint32Array; found: Uint8Array }): Promise<{ values: Uint32Array; found: Uint8Array }>;
}

/**
 * One table instance, driven by the workloads through device-side encodes. Every encode records
 * commands into the caller's encoder and returns at once; passes that carry `timestampWrites`
 * must be exactly one compute pass each, so the timer measures the operation and nothing else.
 * Batch buffers always start at offset 0 (workloads copy sub-ranges into scratch buffers).
 */
export interface BenchTable {
  readonly capacity: number;
  /** Empties the table with GPU passes (never timed). */
  encodeReset(encoder: GPUCommandEncoder): void;
  /** Inserts n pairs (keys unique within the batch and new to the table in every workload). */
  encodeInsert(encoder: GPUCommandEncoder, keys: GPUBuffer, values: GPUBuffer, n: number, timestampWrites?: TimestampWrites): void;
  /** Looks up n keys: outValues[i] is the value, outFound[i] non-zero when found (u32 each). */
  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: TimestampWrites,
  ): void;
  /** Erases n keys (capability 'erase'). */
  encodeErase?(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: TimestampWrites): void;
  /**
   * A mixed batch in one pass (capability 'mixed'): ops are BenchOp codes (u32); out receives a
   * (value, status) u32 pair per op: status 1 when an insert added a new key, a find found its
   * key, an erase removed its key; value is the found value for finds.
   */
  encodeMixed?(
    encoder: GPUCommandEncoder,
    ops: GPUBuffer,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    out: GPUBuffer,
    timestampWrites?: TimestampWrites,
  ): void;
  /**
   * The table's slab allocator alone (capability 'alloc', SlabHash): n slabs, one per invocation,
   * their indices to `out`; `encodeFree` gives them back.
   */
  encodeAllocate?(encoder: GPUCommandEncoder, n: number, out: GPUBuffer, timestampWrites?: TimestampWrites): void;
  encodeFree?(encoder: GPUCommandEncoder, list: GPUBuffer, n: number): void;
  /** Slabs the allocator's pool holds (capability 'alloc'). */
  readonly allocatorSlabs?: number;
  /** Live keys after everything submitted so far has run (reads the count back from the GPU). */
  size(): Promise<number>;
  /** The table's host API (capability 'host'). */
  readonly host?: HostApi;
  destroy(): void;
}

/** A table as the bench knows it: one file in src/tables/ exports one of these. */
export interface TableEntry {
  /** Name used by `--table` and in every result ('linear-probe'). */
  readonly name: string;
  readonly description: string;
  readonly capabilities: ReadonlySet<Capability>;
  /** Keys the table reserves (sentinels); the bench checks that no generated key is one of them. */
  readonly reservedKeys: readonly number[];
  /** Highest load factor the table is benchmarked at; higher loads are skipped with a note. */
  readonly maxLoad: number;
  /** Runs only when `--table` names it (a study rather than part of every run). */
  readonly optIn?: boolean;
  /** A new, empty table of exactly `capacity` slots that never grows. */
  create(gpu: Gpu, capacity: number): Promise<BenchTable>;
}

/** A table package as `pnpm sync:packages` lists it (packages.generated.ts), from its package.json. */
export interface TablePackage {
  /** Its folder under packages/ ('hive'). */
  readonly id: string;
  /** '@gpuhash/hive' */
  readonly name: string;
  /** gpuhash.summary: one line on the design. */
  readonly summary: string;
  /** gpuhash.maxLoad */
  readonly maxLoad: number;
  /** The package's exports. */
  readonly module: object;
  /** Its table class (gpuhash.export). */
  readonly table: { create(gpu: Gpu, options: DictionaryOptions): Promise<Dictionary> };
  /** The entries of its own file in src/tables/, where it has one. */
  readonly tables?: readonly TableEntry[];
}
