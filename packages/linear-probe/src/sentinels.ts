import { assertNoReservedKeys as assertKeysFree } from '@gpuhash/core';

/**
 * Reserved keys. A slot's key word is EMPTY (never used), TOMBSTONE (erased; reusable) or BUSY
 * (claimed by an insert whose value is being published, inside mixed batches); every other u32 is
 * a user key. u64 tables keep slot states in a separate tag word and reserve no key.
 */
export const EMPTY_KEY = 0xffffffff;
export const TOMBSTONE_KEY = 0xfffffffe;
export const BUSY_KEY = 0xfffffffd;

/** Every u32 a user key may not take. */
export const RESERVED_KEYS: readonly number[] = [EMPTY_KEY, TOMBSTONE_KEY, BUSY_KEY];

/** Index marker in the failed-key list for keys refused as reserved (set by device-side validation). */
export const RESERVED_FLAG = 0x80000000;

export function isReservedKey(key: number): boolean {
  return key >= BUSY_KEY;
}

/** Throws a RangeError naming the first index that holds a reserved key (u32 keys). */
export function assertNoReservedKeys(keys: Uint32Array, what: string): void {
  assertKeysFree(keys, what, BUSY_KEY, 'empty, tombstone and busy');
}
