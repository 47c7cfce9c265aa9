import type { BenchTable } from './types';

/**
 * The device-side and host API every gpuhash dictionary table shares (linear-probe, hive): the
 * bench drives any of them through this one adapter.
 */
export interface DictionaryTable {
  readonly capacity: number;
  readonly size: number;
  encodeClear(encoder: GPUCommandEncoder): void;
  encodeInsert(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    options: { timestampWrites?: GPUComputePassTimestampWrites },
  ): unknown;
  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void;
  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void;
  encodeApply(
    encoder: GPUCommandEncoder,
    ops: GPUBuffer,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    out: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void;
  sync(): Promise<unknown>;
  clear(): Promise<void>;
  insert(keys: Uint32Array, values: Uint32Array): Promise<{ failed: Uint32Array }>;
  find(keys: Uint32Array): Promise<{ values: Uint32Array; found: Uint8Array }>;
  destroy(): void;
}

/** Wraps a dictionary table. The bench's op codes are the tables' own (0 insert, 2 find, 3 erase). */
export function adaptDictionary(name: string, table: DictionaryTable): BenchTable {
  return {
    capacity: table.capacity,
    encodeReset: (encoder) => table.encodeClear(encoder),
    encodeInsert: (encoder, keys, values, n, timestampWrites) => {
      table.encodeInsert(encoder, keys, values, n, { timestampWrites });
    },
    encodeFind: (encoder, keys, n, outValues, outFound, timestampWrites) =>
      table.encodeFind(encoder, keys, n, outValues, outFound, timestampWrites),
    encodeErase: (encoder, keys, n, timestampWrites) => table.encodeErase(encoder, keys, n, timestampWrites),
    // `out` is (value, status) pairs.
    encodeMixed: (encoder, ops, keys, values, n, out, timestampWrites) =>
      table.encodeApply(encoder, ops, keys, values, n, out, timestampWrites),
    async size() {
      await table.sync();
      return table.size;
    },
    host: {
      clear: () => table.clear(),
      insert: async (keys, values) => {
        const { failed } = await table.insert(keys, values);
        if (failed.length > 0) throw new Error(`${name}: ${failed.length} keys were not inserted`);
      },
      find: (keys) => table.find(keys),
    },
    destroy: () => table.destroy(),
  };
}
