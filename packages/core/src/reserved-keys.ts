/**
 * Tables reserve the top u32 values as slot markers (empty, tombstone, ...). Every host batch is
 * checked before anything runs, so a refused batch changes nothing.
 */

/**
 * Throws a RangeError naming the first index whose key is `firstReserved` or above. `markers`
 * names the reserved values in the message (e.g. "empty and tombstone").
 */
export function assertNoReservedKeys(keys: Uint32Array, what: string, firstReserved: number, markers: string): void {
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as number;
    if (k >= firstReserved) {
      throw new RangeError(
        `${what}: key 0x${k.toString(16)} at index ${i} is reserved (the table's ${markers} markers); nothing in this batch was applied. Map it to another key before inserting.`,
      );
    }
  }
}
