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
    // Builds to 0.9 can leave a few keys unplaced (reported, not lost: 74 of 120.8 million at 2^27
    // on an H100, now and then one of 3,686 on SwiftShader), which fails a build row.
    maxLoad: 0.85,
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
