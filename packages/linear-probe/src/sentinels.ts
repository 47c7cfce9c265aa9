/**
 * Reserved keys. A slot's key word is EMPTY (never used), TOMBSTONE (erased; reusable) or BUSY
 * (claimed by an insert whose value is being published, inside mixed batches); every other u32 is
 * a user key. u64 tables keep slot states in a separate tag word and reserve no key.
 */
export const EMPTY_KEY = 0xffffffff;
/** The key word of an erased slot, kept so probe sequences past it still find their keys; not a user key. */
export const TOMBSTONE_KEY = 0xfffffffe;
/** The key word of a slot claimed by an insert whose value is not yet published (mixed batches); not a user key. */
export const BUSY_KEY = 0xfffffffd;

/** Every u32 a user key may not take. */
export const RESERVED_KEYS: readonly number[] = [BUSY_KEY, TOMBSTONE_KEY, EMPTY_KEY];

/** Whether a u32 is one of the slot states (`RESERVED_KEYS`), which a u32 table's user key may not take. */
export function isReservedKey(key: number): boolean {
  return key >>> 0 >= BUSY_KEY;
}
