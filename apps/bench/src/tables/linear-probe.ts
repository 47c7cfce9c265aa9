import { LinearProbeTable, RESERVED_KEYS } from '@gpuhash/linear-probe';
import { dictionaryTableEntry } from './dictionary';
import type { TableEntry } from './types';

function entry(name: string, bulkInsert: 'auto' | 'never', description: string): TableEntry {
  return dictionaryTableEntry({
    name,
    description,
    reservedKeys: RESERVED_KEYS,
    maxLoad: 0.95,
    // Unbounded probing (maxProbes = capacity), as in the paper and cuCollections: the default
    // bound of 4096 can refuse keys near load 0.95 at 2^27 slots, where clusters grow longer.
    make: (gpu, capacity) => LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: capacity, bulkInsert }),
  });
}

/** @gpuhash/linear-probe as users get it: large insert batches take the partitioned bulk path. */
export const linearProbe = entry('linear-probe', 'auto', 'open addressing, linear probing, u32 keys and values (@gpuhash/linear-probe)');

/** The same table with every insert on the global-atomic path (the paper's CAS insert). */
export const linearProbeAtomic = entry(
  'linear-probe-atomic',
  'never',
  '@gpuhash/linear-probe with bulkInsert: never (every insert a global CAS, as in the paper)',
);

/** The bench's entries for @gpuhash/linear-probe (read by packages.generated.ts). */
export const tables: readonly TableEntry[] = [linearProbe, linearProbeAtomic];
