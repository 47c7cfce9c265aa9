import { type HortonMode, HortonTable, RESERVED_KEYS } from '@gpuhash/horton';
import { adaptDictionary } from './dictionary';
import type { TableEntry } from './types';

function entry(name: string, mode: HortonMode, description: string): TableEntry {
  return {
    name,
    description,
    // No mixed batches: Horton inserts move keys between buckets (see the package README).
    capabilities: new Set(['insert', 'find', 'erase', 'host']),
    reservedKeys: RESERVED_KEYS,
    // A build that leaves keys unplaced (reported in failed, never lost) fails its row, and its
    // find rows are not run: the rows say how far each mode gets.
    maxLoad: 0.95,
    async create(gpu, capacity) {
      const table = await HortonTable.create(gpu, { capacity, growth: false, mode });
      // Per-batch scratch sized up front keeps the allocation out of the timed passes.
      table.reserveBatch(capacity);
      return adaptDictionary(name, table);
    },
  };
}

/** @gpuhash/horton as users get it: Type A / Type B buckets with remap entries. */
export const horton = entry(
  'horton',
  'horton',
  'Horton table: 8-slot buckets, remap entries, at most 2 buckets per lookup (@gpuhash/horton)',
);

/** The paper's baseline in the same package: a bucketized cuckoo table, two choices, load balancing. */
export const hortonBcht = entry(
  'horton-bcht',
  'bcht',
  "@gpuhash/horton with mode: 'bcht' (the paper's baseline: 8-slot buckets, two choices, load-balancing placement)",
);

/** The bench's entries for @gpuhash/horton (read by packages.generated.ts). */
export const tables: readonly TableEntry[] = [horton, hortonBcht];
