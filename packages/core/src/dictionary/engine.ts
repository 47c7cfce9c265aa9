import type { Gpu } from '../gpu';
import type { FailureReport } from './failures';
import type { KeySpec } from './keys';
import type { ScratchArena } from './scratch';
import type { DeviceDictionary, KeyType } from './types';

/** A batch staged for a host operation: validated, on the device, released when the operation ends. */
export interface StagedBatch {
  readonly n: number;
  readonly keys: GPUBuffer;
  readonly values: GPUBuffer | undefined;
  /** The key words, when the keys came from the host. */
  readonly hostWords: Uint32Array | undefined;
}

/** A mixed batch staged for a host operation. */
export interface StagedApply extends StagedBatch {
  readonly ops: GPUBuffer;
  readonly values: GPUBuffer;
  /** The op codes and values, when they came from the host (then no entry can be refused on the device). */
  readonly hostOps: Uint32Array | undefined;
  readonly hostValues: Uint32Array | undefined;
}

/**
 * What a table package implements (cuCollections' ref and policies): its storage, its kernels
 * behind the device-side API, one attempt at each host batch, and its growth. Everything else a
 * dictionary does (validation, staging, ordering, stale sizes, results, errors) is
 * DictionaryTable's, once, in core.
 */
export interface DictionaryEngine<K extends KeyType = KeyType> extends DeviceDictionary {
  readonly keySpec: KeySpec<K>;
  readonly capacity: number;
  /** Live keys as of the last `refresh` (or clear). */
  readonly size: number;
  /** Whether the table resizes itself (the 'growth' option). */
  readonly growth: boolean;
  readonly scratch: ScratchArena;
  /** Reads the counters and the failed list back in one round trip; updates `size`. */
  refresh(): Promise<FailureReport>;
  /** Writes every live pair densely (keys as key words) and the count to `cursor[0]`. */
  encodeRetrieve(encoder: GPUCommandEncoder, outKeys: GPUBuffer, outValues: GPUBuffer, cursor: GPUBuffer): void;
  /** Attempt `attempt` (0, 1, ...) at an insert batch from a host operation: encode, submit, read the report back. */
  insertBatch(batch: StagedBatch, assign: boolean, attempt: number): Promise<FailureReport>;
  /**
   * After an insert attempt left failures (reserved ones excluded): make room or wait out
   * contention and say 'retry' (the batch runs again: inserts are idempotent), or 'report' them.
   */
  afterInsertFailures(report: FailureReport, attempt: number): Promise<'retry' | 'report'>;
  /** A mixed batch from a host operation; `out` receives (value, status) per op. */
  applyBatch?(batch: StagedApply, out: GPUBuffer): Promise<FailureReport>;
  /** Whether `incoming` more keys fit under the load bound without growing. */
  fits(incoming: number): boolean;
  /** With growth on, before a batch of up to `incoming` new keys: grow so they fit. */
  makeRoom(incoming: number): Promise<void>;
  /** With growth on, after erases (Hive contracts; others do nothing). */
  afterErase(): Promise<void>;
  destroy(): void;
}

/**
 * A table's engine allocated and cleared, written once for every table's create: `build` runs as
 * one `Gpu.allocate` operation; should the device run out of memory (or refuse a buffer), the
 * engine and its scratch are destroyed, as a table's destroy does, so nothing stays allocated, and
 * the typed error is thrown.
 */
export function allocateEngine<E extends DictionaryEngine>(gpu: Gpu, where: string, build: () => E): Promise<E> {
  return gpu.allocate(
    where,
    () => {
      const engine = build();
      const encoder = gpu.device.createCommandEncoder();
      engine.encodeClear(encoder);
      gpu.submit([encoder.finish()]);
      return engine;
    },
    (engine) => {
      engine.scratch.destroy();
      engine.destroy();
    },
  );
}
