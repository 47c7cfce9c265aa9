import { LinearProbeTable, RESERVED_KEYS } from '@gpuhash/linear-probe';
import { dictionaryTableEntry } from './dictionary';
import type { TableEntry } from './types';

function entry(
  name: string,
  bulkInsert: 'auto' | 'never',
  description: string,
  windows?: number,
  windowOrder?: 'auto' | 'never',
): TableEntry {
  return dictionaryTableEntry({
    name,
    description,
    reservedKeys: RESERVED_KEYS,
    maxLoad: 0.95,
    // Unbounded probing (maxProbes = capacity), as in the paper and cuCollections: the default
    // bound of 4096 can refuse keys near load 0.95 at 2^27 slots, where clusters grow longer.
    make: (gpu, capacity) =>
      LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: capacity, bulkInsert, windows, windowOrder }),
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

/**
 * The same table with its slots split over 4 storage bindings at any size, as tables past one
 * binding (2^28 slots and more) are: what the window accessors cost, against 'linear-probe'.
 */
export const linearProbeWindows: TableEntry = {
  ...entry(
    'linear-probe-windows4',
    'auto',
    '@gpuhash/linear-probe with its slots in 4 storage bindings (as tables of 2^28 slots and more; only when --table names it)',
    4,
  ),
  // Its kernels compile for minutes on SwiftShader: a GPU study, not part of every run.
  optIn: true,
};

/**
 * The same table with every find in batch order, however large the table: what window order
 * (finds over more than 2 GiB of slots taken window by window) gains, against 'linear-probe'.
 */
export const linearProbeBatchOrder: TableEntry = {
  ...entry(
    'linear-probe-batch-order',
    'auto',
    '@gpuhash/linear-probe with finds in batch order at every size (only when --table names it)',
    undefined,
    'never',
  ),
  optIn: true,
};

/** The bench's entries for @gpuhash/linear-probe (read by packages.generated.ts). */
export const tables: readonly TableEntry[] = [linearProbe, linearProbeAtomic, linearProbeWindows, linearProbeBatchOrder];
