import { assertNoReservedKeys as assertKeysFree } from '@gpuhash/core';

/**
 * Reserved keys. A slot's key word is EMPTY (free, or claimed and not yet published) or TOMBSTONE
 * (retired: erased or abandoned inside a mixed batch, freed when the batch ends); every other u32
 * is a user key. The README's slot-state table says when each appears.
 */
export const EMPTY_KEY = 0xffffffff;
export const TOMBSTONE_KEY = 0xfffffffe;

/** Every u32 a user key may not take. */
export const RESERVED_KEYS: readonly number[] = [EMPTY_KEY, TOMBSTONE_KEY];

/** Index marker in the failed-key list for keys refused as reserved (set by device-side validation). */
export const RESERVED_FLAG = 0x80000000;

/**
 * Index marker in the failed-key list for inserts that gave up on their bucket locks (LOCKED_ROUNDS
 * rounds lost to other ops of the batch, as when dozens of them pile into a few buckets): not a
 * full table, so the batch runs again.
 */
export const CONTENDED_FLAG = 0x40000000;

/** The failed list's batch indices without the contention marker. */
export function withoutContention(failed: Uint32Array): Uint32Array {
  return failed.map((i) => i & ~CONTENDED_FLAG);
}

export function isReservedKey(key: number): boolean {
  return key >>> 0 >= TOMBSTONE_KEY;
}

/** Throws a RangeError naming the first index that holds a reserved key. */
export function assertNoReservedKeys(keys: Uint32Array, what: string): void {
  assertKeysFree(keys, what, TOMBSTONE_KEY, 'empty and tombstone');
}
