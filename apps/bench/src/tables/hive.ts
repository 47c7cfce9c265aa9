import { HiveTable, RESERVED_KEYS } from '@gpuhash/hive';
import { adaptDictionary } from './dictionary';
import type { TableEntry } from './types';

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
    // Inserts and mixed batches are three passes (lock-free, release, locked); the bench's
    // timestamps span all three. Encodes grow the per-batch scratch lists on demand; sizing them
    // up front keeps passes already recorded into an encoder valid.
    table.reserveBatch(capacity);
    return adaptDictionary('hive', table);
  },
};
