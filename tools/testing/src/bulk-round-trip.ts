import { check } from './keys';

/** What a bulk round trip needs of a table (the dictionary contract's host calls). */
export interface BulkTable {
  find(keys: Uint32Array): Promise<{ found: ArrayLike<number>; values: ArrayLike<number> }>;
  erase(keys: Uint32Array): Promise<number>;
  insert(keys: Uint32Array, values: Uint32Array): Promise<{ inserted: number; failed: ArrayLike<number> }>;
}

/**
 * After `keys` were inserted with `values`: every key is found with its value, no key of `misses`
 * is, erasing the first half removes exactly it, and the half is inserted again. Returns that
 * re-insert's result for the table's own checks.
 */
export async function expectBulkRoundTrip(
  table: BulkTable,
  keys: Uint32Array,
  values: Uint32Array,
  misses: Uint32Array,
): Promise<{ inserted: number; failed: ArrayLike<number> }> {
  const n = keys.length;
  const hit = await table.find(keys);
  for (let i = 0; i < n; i++) if (hit.found[i] !== 1 || hit.values[i] !== values[i]) throw new Error(`hit ${i} wrong`);
  const miss = await table.find(misses);
  for (let i = 0; i < misses.length; i++) if (miss.found[i] !== 0) throw new Error(`miss ${i} found`);
  const half = keys.subarray(0, n / 2);
  check((await table.erase(half)) === n / 2, 'erase count');
  const after = await table.find(keys);
  for (let i = 0; i < n; i++) if (after.found[i] !== (i < n / 2 ? 0 : 1)) throw new Error(`after erase ${i} wrong`);
  return table.insert(half, values.subarray(0, n / 2));
}
