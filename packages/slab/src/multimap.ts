import {
  DeviceArray,
  encodeExclusiveScan,
  type Gpu,
  type InsertResult,
  InvalidArgumentError,
  type KeysInput,
  ReservedKeyError,
  type ValuesInput,
} from '@gpuhash/core';
import { createSlabEngine, SlabTableBase } from './base';
import type { SlabEngine } from './engine';
import type { FindAllResult, SlabOptions } from './types';

/**
 * SlabHash with duplicate keys kept (the paper's INSERT, SEARCH, SEARCHALL, DELETE, DELETEALL):
 * `insert` always adds a pair, `find` returns the first copy in chain order, `findAll` and `count`
 * every copy, `erase` removes the first copy of each key entry and `eraseAll` every copy. Erased
 * slots become EMPTY again and are reused. `size` counts pairs.
 */
export class SlabMultimap extends SlabTableBase {
  private constructor(gpu: Gpu, engine: SlabEngine) {
    super(gpu, engine, 'SlabMultimap');
  }

  /**
   * Creates an empty multimap sized for `options.capacity` pairs.
   *
   * @example
   * ```ts
   * const mm = await SlabMultimap.create(gpu, { capacity: 1 << 16 });
   * await mm.insert(new Uint32Array([7, 7, 9]), new Uint32Array([1, 2, 3]));
   * const counts = await mm.count(new Uint32Array([7, 9, 5])); // [2, 1, 0]
   * ```
   */
  static async create(gpu: Gpu, options: SlabOptions): Promise<SlabMultimap> {
    return new SlabMultimap(gpu, await createSlabEngine(gpu, 'SlabMultimap.create', options, 'multimap'));
  }

  /** Adds every pair (a key already present gets another copy). `inserted` counts the pairs added. */
  override insert(keys: KeysInput<'u32'>, values: ValuesInput): Promise<InsertResult> {
    return super.insert(keys, values);
  }

  /** A multimap keeps every copy, so there is nothing to assign: use `insert`, or `eraseAll` then `insert`. */
  override insertOrAssign(_keys: KeysInput<'u32'>, _values: ValuesInput): Promise<InsertResult> {
    return Promise.reject(
      new InvalidArgumentError('SlabMultimap.insertOrAssign: a multimap keeps every copy of a key; use insert (or eraseAll, then insert)'),
    );
  }

  /** Copies of each key: host keys give a host array, device keys a device array (the caller destroys it). */
  count(keys: Uint32Array): Promise<Uint32Array>;
  count(keys: DeviceArray<'u32'>): Promise<DeviceArray<'u32'>>;
  count(keys: KeysInput<'u32'>): Promise<Uint32Array | DeviceArray<'u32'>> {
    return this.runOp('count', async () => {
      const batch = await this.stage('count', keys);
      const counts = this.gpu.createArray('u32', batch.n, 'SlabMultimap.count');
      const encoder = this.gpu.device.createCommandEncoder();
      this.engine.encodeCopies(encoder, batch.keys, batch.n, counts.buffer);
      this.gpu.submit([encoder.finish()]);
      if (keys instanceof DeviceArray) return counts;
      try {
        return await this.gpu.download(counts);
      } finally {
        counts.destroy();
      }
    });
  }

  /**
   * Copies per key into `outCounts` (u32 each), device side: `count` without a round trip. With
   * `gather`, each key's values go to gather.values from gather.offsets[i] on (offsets: an
   * exclusive prefix sum of the counts, e.g. from core's encodeExclusiveScan).
   */
  encodeCount(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outCounts: GPUBuffer,
    gather?: { offsets: GPUBuffer; values: GPUBuffer },
  ): void {
    this.engine.encodeCopies(encoder, keys, n, outCounts, gather);
  }

  /** Every copy's value of each key (SEARCHALL), grouped by key: counts, offsets and values. */
  findAll(keys: Uint32Array): Promise<FindAllResult> {
    return this.runOp('findAll', async () => {
      const batch = await this.stage('findAll', keys);
      const n = batch.n;
      const counts = this.temporary(this.gpu.createArray('u32', Math.max(1, n), 'SlabMultimap.findAll.counts'));
      const offsets = this.temporary(this.gpu.createArray('u32', Math.max(1, n), 'SlabMultimap.findAll.offsets'));
      const encoder = this.gpu.device.createCommandEncoder();
      this.engine.encodeCopies(encoder, batch.keys, n, counts.buffer);
      if (n > 0) encodeExclusiveScan(this.gpu, encoder, counts.buffer, offsets.buffer, n);
      this.gpu.submit([encoder.finish()]);
      const hostCounts = n === 0 ? new Uint32Array(0) : await this.gpu.download(counts, n);
      const hostOffsets = n === 0 ? new Uint32Array(0) : await this.gpu.download(offsets, n);
      const total = n === 0 ? 0 : (hostOffsets[n - 1] as number) + (hostCounts[n - 1] as number);
      const values = this.temporary(this.gpu.createArray('u32', Math.max(1, total), 'SlabMultimap.findAll.values'));
      const gather = this.gpu.device.createCommandEncoder();
      this.engine.encodeCopies(gather, batch.keys, n, counts.buffer, { offsets: offsets.buffer, values: values.buffer });
      this.gpu.submit([gather.finish()]);
      const hostValues = total === 0 ? new Uint32Array(0) : await this.gpu.download(values, total);
      return { counts: hostCounts, offsets: hostOffsets, values: hostValues };
    });
  }

  /** Erases every copy of each key (DELETEALL); returns how many pairs were erased. */
  eraseAll(keys: KeysInput<'u32'>): Promise<number> {
    return this.runOp('eraseAll', async () => {
      const batch = await this.stage('eraseAll', keys);
      const before = this.engine.size;
      const encoder = this.gpu.device.createCommandEncoder();
      this.engine.encodeEraseKeys(encoder, batch.keys, batch.n, true);
      this.gpu.submit([encoder.finish()]);
      const report = await this.engine.refresh();
      const erased = before - this.engine.size;
      if (report.reserved.length > 0 && keys instanceof DeviceArray)
        throw new ReservedKeyError('SlabMultimap.eraseAll', report.reserved, this.engine.keySpec.reservedNames, 'others', erased);
      return erased;
    });
  }
}
