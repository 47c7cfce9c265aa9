import { LinearProbeTable, RESERVED_KEYS } from '@gpuhash/linear-probe';
import type { BenchTable, TableEntry } from './types';

function entry(name: string, bulkInsert: 'auto' | 'never', description: string): TableEntry {
  return {
    name,
    description,
    capabilities: new Set(['insert', 'find', 'erase', 'mixed', 'host']),
    reservedKeys: RESERVED_KEYS,
    maxLoad: 0.95,
    async create(gpu, capacity) {
      // Unbounded probing (maxProbes = capacity), as in the paper and cuCollections: the default
      // bound of 4096 can refuse keys near load 0.95 at 2^27 slots, where clusters grow longer.
      const table = await LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: capacity, bulkInsert });
      return adapt(table);
    },
  };
}

/** @gpuhash/linear-probe as users get it: large insert batches take the partitioned bulk path. */
export const linearProbe = entry('linear-probe', 'auto', 'open addressing, linear probing, u32 keys and values (@gpuhash/linear-probe)');

/** The same table with every insert on the global-atomic path (the paper's CAS insert). */
export const linearProbeAtomic = entry(
  'linear-probe-atomic',
  'never',
  '@gpuhash/linear-probe with bulkInsert: never (every insert a global CAS, as in the paper)',
);

function adapt(table: LinearProbeTable): BenchTable {
  return {
    capacity: table.capacity,
    encodeReset: (encoder) => table.encodeClear(encoder),
    encodeInsert: (encoder, keys, values, n, timestampWrites) => table.encodeInsert(encoder, keys, values, n, { timestampWrites }),
    encodeFind: (encoder, keys, n, outValues, outFound, timestampWrites) =>
      table.encodeFind(encoder, keys, n, outValues, outFound, timestampWrites),
    encodeErase: (encoder, keys, n, timestampWrites) => table.encodeErase(encoder, keys, n, timestampWrites),
    // The bench's op codes are linear-probe's (0 insert, 2 find, 3 erase); `out` is (value, status) pairs.
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
        if (failed.length > 0) throw new Error(`linear-probe: ${failed.length} keys were not inserted`);
      },
      find: (keys) => table.find(keys),
    },
    destroy: () => table.destroy(),
  };
}
