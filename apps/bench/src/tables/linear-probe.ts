import { LinearProbeTable, RESERVED_KEYS } from '@gpuhash/linear-probe';
import type { BenchTable, TableEntry } from './types';

/** @gpuhash/linear-probe: open addressing, linear probing, u32 keys and values (seed 001). */
export const linearProbe: TableEntry = {
  name: 'linear-probe',
  description: 'open addressing, linear probing, u32 keys and values (@gpuhash/linear-probe)',
  capabilities: new Set(['insert', 'find', 'erase', 'mixed', 'host']),
  reservedKeys: RESERVED_KEYS,
  maxLoad: 0.95,
  async create(gpu, capacity) {
    // Unbounded probing (maxProbes = capacity), as in the paper and cuCollections: the default
    // bound of 4096 can refuse keys near load 0.95 at 2^27 slots, where clusters grow longer.
    const table = await LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: capacity });
    // encodeInsert/Erase/Apply grow the table's failed-key list on demand, destroying the old one;
    // inside one command encoder that would invalidate passes already recorded. Recording one
    // batch of the largest size into an encoder that is never submitted sizes the list up front.
    const scratch = gpu.createBuffer(16, 'bench.linear-probe.prime');
    table.encodeErase(gpu.device.createCommandEncoder({ label: 'bench.linear-probe.prime (never submitted)' }), scratch, capacity);
    scratch.destroy();
    return adapt(table);
  },
};

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
