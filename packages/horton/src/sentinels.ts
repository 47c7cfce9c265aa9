/**
 * Reserved keys. A slot's key word is EMPTY (a free slot) or a user key; the last slot of a Type B
 * bucket holds REMAP in its key word (the mark of a Type B bucket) and the remap entries in its
 * value word. Every other u32 is a user key.
 */
export const EMPTY_KEY = 0xffffffff;
/** The key word of a Type B bucket's last slot, whose value word holds the remap entries; not a user key. */
export const REMAP_KEY = 0xfffffffe;

/** Every u32 a user key may not take. */
export const RESERVED_KEYS: readonly number[] = [REMAP_KEY, EMPTY_KEY];

/** Whether a u32 is one of the reserved markers (`RESERVED_KEYS`). */
export function isReservedKey(key: number): boolean {
  return key >>> 0 >= REMAP_KEY;
}
