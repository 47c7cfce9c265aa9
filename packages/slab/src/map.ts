import type { Gpu } from '@gpuhash/core';
import { createSlabEngine, SlabTableBase } from './base';
import type { SlabEngine } from './engine';
import type { SlabOptions } from './types';

/**
 * SlabHash (Ashkiani, Farach-Colton and Owens, IPDPS 2018) with unique keys: each bucket is a
 * chain of 128-byte slabs of 15 key-value pairs, read by a cooperative group at once; chains grow
 * slab by slab from the SlabAlloc pool, so inserting never rehashes. `insert` keeps present keys'
 * values, `insertOrAssign` overwrites them (the paper's REPLACE); `erase` leaves a tombstone until
 * `flush()`.
 */
export class SlabHashMap extends SlabTableBase {
  private constructor(gpu: Gpu, engine: SlabEngine) {
    super(gpu, engine, 'SlabHashMap');
  }

  /**
   * Creates an empty map sized for `options.capacity` keys.
   *
   * @example
   * ```ts
   * import { requestGpu } from '@gpuhash/core';
   * import { SlabHashMap } from '@gpuhash/slab';
   *
   * const gpu = await requestGpu();
   * const map = await SlabHashMap.create(gpu, { capacity: 1 << 20 });
   * await map.insert(new Uint32Array([17, 42]), new Uint32Array([1, 2]));
   * const { values, found } = await map.find(new Uint32Array([42, 5])); // [2, 0], [1, 0]
   * map.destroy();
   * ```
   */
  static async create(gpu: Gpu, options: SlabOptions): Promise<SlabHashMap> {
    return new SlabHashMap(gpu, await createSlabEngine(gpu, 'SlabHashMap.create', options, 'map'));
  }
}
