import { HiveTable, RESERVED_KEYS } from '@gpuhash/hive';
import type { BenchTable, TableEntry } from './types';

/** @gpuhash/hive: 32-slot buckets, two choices, cuckoo eviction, stash, u32 keys and values (seed 000). */
export const hive: TableEntry = {
  name: 'hive',
  description: 'Hive: 32-slot buckets, WABC/WCME over subgroups, cuckoo eviction, stash, u32 keys and values (@gpuhash/hive)',
  capabilities: new Set(['insert', 'find', 'erase', 'mixed', 'host']),
  reservedKeys: RESERVED_KEYS,
  maxLoad: 0.95,
  async create(gpu, capacity) {
    // No automatic resizing: the bench wants exactly `capacity` slots (a multiple of 32 buckets).
    const table = await HiveTable.create(gpu, { capacity, growth: false });
    // Encodes grow the per-batch scratch lists on demand; sizing them up front keeps passes already
    // recorded into an encoder valid.
    table.reserveBatch(capacity);
    return adapt(table);
  },
};

function adapt(table: HiveTable): BenchTable {
  return {
    capacity: table.capacity,
    encodeReset: (encoder) => table.encodeClear(encoder),
    // Inserts and mixed batches are three passes (lock-free pass, release, locked pass); the
    // timestamps span all three.
    encodeInsert: (encoder, keys, values, n, timestampWrites) => table.encodeInsert(encoder, keys, values, n, { timestampWrites }),
    encodeFind: (encoder, keys, n, outValues, outFound, timestampWrites) =>
      table.encodeFind(encoder, keys, n, outValues, outFound, timestampWrites),
    encodeErase: (encoder, keys, n, timestampWrites) => table.encodeErase(encoder, keys, n, timestampWrites),
    // The bench's op codes are Hive's (0 insert, 2 find, 3 erase); `out` is (value, status) pairs.
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
        if (failed.length > 0) throw new Error(`hive: ${failed.length} keys were not inserted`);
      },
      find: (keys) => table.find(keys),
    },
    destroy: () => table.destroy(),
  };
}
