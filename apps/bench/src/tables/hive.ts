import { HiveTable, RESERVED_KEYS } from '@gpuhash/hive';
import { dictionaryTableEntry } from './dictionary';
import type { TableEntry } from './types';

function entry(name: string, bulkInsert: 'auto' | 'never', description: string): TableEntry {
  return dictionaryTableEntry({
    name,
    description,
    reservedKeys: RESERVED_KEYS,
    maxLoad: 0.95,
    async make(gpu, capacity) {
      const table = await HiveTable.create(gpu, { capacity, growth: false, bulkInsert });
      // Per-batch scratch sized up front keeps the allocation out of the timed passes.
      table.reserveBatch(capacity);
      return table;
    },
  });
}

/** @gpuhash/hive as users get it: large insert batches take the bulk build. */
export const hive = entry('hive', 'auto', 'Hive: cuckoo buckets, subgroup claims, stash, resizes without a global rehash (@gpuhash/hive)');

/** The same table with every insert on the op passes (pass A, then the locked pass B). */
export const hiveOps = entry('hive-ops', 'never', '@gpuhash/hive with bulkInsert: never (every insert through passes A and B)');

/** The bench's entries for @gpuhash/hive (read by packages.generated.ts). */
export const tables: readonly TableEntry[] = [hive, hiveOps];
