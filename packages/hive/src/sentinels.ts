/**
 * Reserved keys. A slot's key word is EMPTY (free, or claimed and not yet published) or TOMBSTONE
 * (retired: erased or abandoned inside a mixed batch, freed when the batch ends); every other u32
 * is a user key. The README's slot-state table says when each appears.
 */
export const EMPTY_KEY = 0xffffffff;
export const TOMBSTONE_KEY = 0xfffffffe;

/** Every u32 a user key may not take. */
export const RESERVED_KEYS: readonly number[] = [TOMBSTONE_KEY, EMPTY_KEY];

export function isReservedKey(key: number): boolean {
  return key >>> 0 >= TOMBSTONE_KEY;
}
