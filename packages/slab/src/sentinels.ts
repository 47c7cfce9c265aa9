/**
 * Reserved keys. A slot's key word is EMPTY (never used since the slab was last reset), TOMBSTONE
 * (erased in a unique-key table; the slot stays taken so no chain ever holds its key twice) or
 * BUSY (claimed by a mixed-batch insert whose value is being published); every other u32 is a
 * user key.
 */
export const EMPTY_KEY = 0xffffffff;
/** The key word of an erased slot in map and set mode; never a user key. */
export const TOMBSTONE_KEY = 0xfffffffe;
/** The key word of a slot claimed inside a mixed batch, before its value is published; never a user key. */
export const BUSY_KEY = 0xfffffffd;
/** The next-slab word of a chain's last slab (the paper's EMPTY_INDEX_POINTER). */
export const EMPTY_POINTER = 0xffffffff;

/** Every u32 a user key may not take. */
export const RESERVED_KEYS: readonly number[] = [BUSY_KEY, TOMBSTONE_KEY, EMPTY_KEY];

/** Whether a u32 is one of the slot states (`RESERVED_KEYS`). */
export function isReservedKey(key: number): boolean {
  return key >>> 0 >= BUSY_KEY;
}
