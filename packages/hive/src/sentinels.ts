/**
 * Reserved keys. A slot's key word is EMPTY (free, or claimed and not yet published) or TOMBSTONE
 * (retired: erased by a mixed batch's pass A, or a claim given back, freed when the pass ends); every other u32
 * is a user key. The README's slot-state table says when each appears.
 */
export const EMPTY_KEY = 0xffffffff;
/** The key word of a retired slot (erased by a mixed batch's pass A, or a claim given back); not a user key. */
export const TOMBSTONE_KEY = 0xfffffffe;

/** Every u32 a user key may not take. */
export const RESERVED_KEYS: readonly number[] = [TOMBSTONE_KEY, EMPTY_KEY];

/** Whether a u32 is one of the slot states (`RESERVED_KEYS`), which a user key may not take. */
export function isReservedKey(key: number): boolean {
  return key >>> 0 >= TOMBSTONE_KEY;
}
