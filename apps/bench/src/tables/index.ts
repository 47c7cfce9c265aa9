import { hive } from './hive';
import { linearProbe, linearProbeAtomic } from './linear-probe';
import type { TableEntry } from './types';

export type { BenchTable, Capability, HostApi, TableEntry, TimestampWrites } from './types';
export { BenchOp } from './types';

/** Every table the bench knows, in the order results are printed. A new table adds one line here. */
export const TABLES: readonly TableEntry[] = [linearProbe, linearProbeAtomic, hive];
