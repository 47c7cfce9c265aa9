import { dictionaryEntry } from './dictionary';
import { TABLE_PACKAGES } from './packages.generated';
import type { TableEntry } from './types';

export type { BenchTable, Capability, HostApi, TableEntry, TablePackage, TimestampWrites } from './types';
export { BenchOp } from './types';

/**
 * Every table the bench knows, in the order results are printed: one or more per table package
 * under packages/ (found by `pnpm sync:packages`), from its own file here if it has one (tuned
 * options, variants), else through the generic dictionary entry. A new table needs no line here.
 */
export const TABLES: readonly TableEntry[] = TABLE_PACKAGES.flatMap((pkg) => pkg.tables ?? [dictionaryEntry(pkg)]);
