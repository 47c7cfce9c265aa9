/**
 * Reserved keys. A slot's key word is EMPTY (never used), TOMBSTONE (erased; reusable) or BUSY
 * (claimed by an insert whose value is being published, inside mixed batches); every other u32 is
 * a user key. For u64 keys the reserved values are the same words in the high half with the
 * low half all ones: 0xFFFFFFFF_FFFFFFFF and so on.
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

/** Throws a RangeError naming the first index that holds a reserved key. */
export function assertNoReservedKeys(keys: Uint32Array, what: string, wordsPerKey: 1 | 2 = 1): void {
  if (wordsPerKey === 1) {
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as number;
      if (k >= BUSY_KEY) throw reservedError(what, i, `0x${k.toString(16)}`);
    }
    return;
  }
  for (let i = 0; i < keys.length; i += 2) {
    const lo = keys[i] as number;
    const hi = keys[i + 1] as number;
    if (lo >= BUSY_KEY && hi === 0xffffffff) {
      throw reservedError(what, i / 2, `0x${hi.toString(16)}${lo.toString(16).padStart(8, '0')}`);
    }
  }
}

function reservedError(what: string, index: number, key: string): RangeError {
  return new RangeError(
    `${what}: key ${key} at index ${index} is reserved (the table's empty, tombstone and busy markers); nothing in this batch was applied. Map it to another key before inserting.`,
  );
}
