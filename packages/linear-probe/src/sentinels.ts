/**
 * Reserved keys. A slot's key word is EMPTY (never used), TOMBSTONE (erased; reusable) or BUSY
 * (claimed by an insert whose value is being published, inside mixed batches); every other u32 is
 * a user key. u64 tables keep slot states in a separate tag word and reserve no key.
 */
export const EMPTY_KEY = 0xffffffff;
export const TOMBSTONE_KEY = 0xfffffffe;
export const BUSY_KEY = 0xfffffffd;

/** Every u32 a user key may not take. */
export const RESERVED_KEYS: readonly number[] = [BUSY_KEY, TOMBSTONE_KEY, EMPTY_KEY];

export function isReservedKey(key: number): boolean {
  return key >>> 0 >= BUSY_KEY;
}
