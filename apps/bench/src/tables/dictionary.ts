import type { DeviceDictionary, Dictionary, DictionaryOptions, Gpu } from '@gpuhash/core';
import type { BenchTable, TableEntry, TablePackage } from './types';

/** What the bench uses of a gpuhash dictionary table (core's contract), device side and host side. */
export type BenchDictionary = Pick<Dictionary, 'capacity' | 'size' | 'sync' | 'clear' | 'insert' | 'find' | 'destroy'> &
  Pick<DeviceDictionary, 'encodeClear' | 'encodeInsert' | 'encodeFind' | 'encodeErase' | 'encodeApply'>;

/** Wraps a dictionary table. The bench's op codes are core's `Op`, which every table shares. */
export function adaptDictionary(name: string, table: BenchDictionary): BenchTable {
  const { encodeApply } = table;
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
    encodeMixed: encodeApply
      ? (encoder, ops, keys, values, n, out, timestampWrites) =>
          encodeApply.call(table, encoder, ops, keys, values, n, out, timestampWrites)
      : undefined,
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
      find: (keys, out) => table.find(keys, { out }),
    },
    destroy: () => table.destroy(),
  };
}

/**
 * A bench entry for a dictionary table with mixed batches and a host API, made by `make` at the
 * run's capacity: the entries of table packages that list several configurations.
 */
export function dictionaryTableEntry(o: {
  name: string;
  description: string;
  reservedKeys: readonly number[];
  maxLoad: number;
  make: (gpu: Gpu, capacity: number) => Promise<BenchDictionary>;
}): TableEntry {
  return {
    name: o.name,
    description: o.description,
    capabilities: new Set(['insert', 'find', 'erase', 'mixed', 'host']),
    reservedKeys: o.reservedKeys,
    maxLoad: o.maxLoad,
    async create(gpu, capacity) {
      return adaptDictionary(o.name, await o.make(gpu, capacity));
    },
  };
}

/**
 * The bench entry of a table package without a file of its own in src/tables/: the table made by
 * its class's `create(gpu, { capacity, growth: false })` (exactly `capacity` slots, never grows),
 * per-batch scratch sized up front, driven through core's dictionary contract.
 */
export function dictionaryEntry(pkg: TablePackage): TableEntry {
  const reserved = (pkg.module as { RESERVED_KEYS?: readonly number[] }).RESERVED_KEYS ?? [];
  const { table: Table } = pkg;
  return {
    name: pkg.id,
    description: `${pkg.summary} (${pkg.name})`,
    capabilities: new Set(['insert', 'find', 'erase', 'mixed', 'host']),
    reservedKeys: reserved,
    maxLoad: pkg.maxLoad,
    async create(gpu: Gpu, capacity: number) {
      const options: DictionaryOptions = { capacity, growth: false };
      const table = await Table.create(gpu, options);
      // Encodes grow per-batch scratch on demand; sizing it up front keeps passes already
      // recorded into an encoder valid (and keeps the allocation out of the timed passes).
      table.reserveBatch(capacity);
      return adaptDictionary(pkg.id, table);
    },
  };
}
