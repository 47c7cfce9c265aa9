import { type DeviceArray, type Dictionary, type Gpu, ReservedKeyError } from '@gpuhash/core';
import { check, universe } from './keys';
import type { Rng } from './rng';

/** What the reserved-key check needs of a table (core's Dictionary): host and device inserts, host finds, its size. */
export type ReservedKeysTable = Pick<Dictionary, 'size' | 'insert' | 'find'>;

/** Runs `call` and returns what it threw (undefined if nothing). */
export async function thrown(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (e) {
    return e;
  }
  return undefined;
}

/**
 * The reserved-key contract every table shares, on an empty table:
 * - a host batch holding a reserved key is refused whole with a ReservedKeyError naming its index, by
 *   insert and find, and the table stays empty;
 * - a device batch (validated on the GPU) applies its other keys and then throws, naming index 7.
 * Leaves the device batch's 29 keys in the table; returns their device arrays (the caller
 * destroys them) for table-specific checks.
 */
export async function expectReservedKeysRefused(
  gpu: Gpu,
  rng: Rng,
  table: ReservedKeysTable,
  reservedKeys: readonly number[],
  hostChecks?: (keys: Uint32Array) => Promise<void>,
): Promise<{ keys: DeviceArray<'u32'>; values: DeviceArray<'u32'> }> {
  for (const reserved of reservedKeys) {
    const keys = universe(rng, 20, reservedKeys);
    const at = rng.below(20);
    keys[at] = reserved;
    const error = await thrown(() => table.insert(keys, new Uint32Array(20)));
    check(
      error instanceof ReservedKeyError && error.code === 'RESERVED_KEY' && error.applied === 'none' && error.firstIndex === at,
      `reserved 0x${reserved.toString(16)}: no ReservedKeyError naming index ${at}: ${error}`,
    );
    check(String((error as Error).message).includes(`index ${at}`), `message does not name index ${at}: ${(error as Error).message}`);
    check(table.size === 0, 'a refused batch changed the table');
    check((await thrown(() => table.find(keys))) instanceof ReservedKeyError, 'find accepted a reserved key');
    await hostChecks?.(keys);
  }
  // Device-resident input is validated on the GPU: the others are applied, the error names the index.
  const keys = universe(rng, 30, reservedKeys);
  keys[7] = reservedKeys[0] as number;
  const dk = gpu.upload(keys);
  const dv = gpu.upload(new Uint32Array(30).fill(5));
  const deviceError = await thrown(() => table.insert(dk, dv));
  check(
    deviceError instanceof ReservedKeyError && deviceError.applied === 'others' && deviceError.firstIndex === 7,
    `device batch: ${deviceError}`,
  );
  check(table.size === 29, `device batch applied ${table.size} keys, expected 29`);
  return { keys: dk, values: dv };
}
