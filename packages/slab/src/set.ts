import { DeviceArray, type Gpu, type InsertResult, type KeysInput, type ValuesInput } from '@gpuhash/core';
import { createSlabEngine, SlabTableBase } from './base';
import type { SlabEngine } from './engine';
import type { SlabOptions } from './types';

/**
 * SlabHash with keys only: 31 keys per slab. The dictionary contract holds with values left out:
 * `insert(keys)` takes no values (any given are ignored), `find` reports presence with values 0,
 * `contains` is the usual membership test.
 */
export class SlabSet extends SlabTableBase {
  private constructor(gpu: Gpu, engine: SlabEngine) {
    super(gpu, engine, 'SlabSet');
  }

  /**
   * Creates an empty set sized for `options.capacity` keys.
   *
   * @example
   * ```ts
   * const set = await SlabSet.create(gpu, { capacity: 1 << 16 });
   * await set.insert(new Uint32Array([3, 5, 8]));
   * const present = await set.contains(new Uint32Array([5, 6])); // [1, 0]
   * ```
   */
  static async create(gpu: Gpu, options: SlabOptions): Promise<SlabSet> {
    return new SlabSet(gpu, await createSlabEngine(gpu, 'SlabSet.create', options, 'set'));
  }

  /** Adds keys (values, if given, are ignored). */
  override insert(keys: KeysInput<'u32'>, values?: ValuesInput): Promise<InsertResult> {
    return this.withValues(keys, values, (v) => super.insert(keys, v));
  }

  /** The same as `insert` in a set. */
  override insertOrAssign(keys: KeysInput<'u32'>, values?: ValuesInput): Promise<InsertResult> {
    return this.withValues(keys, values, (v) => super.insertOrAssign(keys, v));
  }

  /** Values the contract's insert path stages (zeros), when the caller gave none; the kernels never read them in a set. */
  private async withValues<T>(keys: KeysInput<'u32'>, values: ValuesInput | undefined, run: (v: ValuesInput) => Promise<T>): Promise<T> {
    if (values !== undefined) return run(values);
    if (keys instanceof DeviceArray) {
      const zeros = this.gpu.createArray('u32', keys.length, 'SlabSet.values');
      try {
        return await run(zeros);
      } finally {
        zeros.destroy();
      }
    }
    return run(new Uint32Array(keys instanceof Uint32Array ? keys.length : 0));
  }
}
