import { DeviceArray } from '../device-array';
import { InvalidArgumentError, ReservedKeyError } from '../errors';
import { u64FromWords, u64Words } from '../u64-words';
import { describeValue } from './ops';
import type { KeyType } from './types';

/**
 * The host half of a table's key policy (cuCollections' sentinels): the key width and which u32
 * values the table reserves as slot markers. u64 tables that keep slot states apart reserve none.
 */
export interface KeySpec<K extends KeyType = KeyType> {
  readonly type: K;
  readonly wordsPerKey: 1 | 2;
  /** u32 keys from this value up are reserved; undefined when none is. */
  readonly firstReserved: number | undefined;
  /** The reserved values, for messages: 'empty, tombstone and busy'. */
  readonly reservedNames: string;
}

/** u32 keys, with the values from `firstReserved` up reserved as the markers `names`. */
export function u32KeySpec(firstReserved: number, names: string): KeySpec<'u32'> {
  return { type: 'u32', wordsPerKey: 1, firstReserved, reservedNames: names };
}

/** u64 keys (two words, low first), none reserved. */
export function u64KeySpec(): KeySpec<'u64'> {
  return { type: 'u64', wordsPerKey: 2, firstReserved: undefined, reservedNames: 'no' };
}

/** Batch indices of the reserved keys in u32 key words (all of them, in order). */
export function reservedIndices(spec: KeySpec, words: Uint32Array): Uint32Array {
  const first = spec.firstReserved;
  if (first === undefined || spec.wordsPerKey !== 1) return new Uint32Array(0);
  let count = 0;
  for (let i = 0; i < words.length; i++) if ((words[i] as number) >= first) count++;
  if (count === 0) return new Uint32Array(0);
  const out = new Uint32Array(count);
  let o = 0;
  for (let i = 0; i < words.length; i++) if ((words[i] as number) >= first) out[o++] = i;
  return out;
}

/** Keys in a host batch before its checks (0 for what is not a key array: hostKeyWords refuses it). */
export function hostKeyCount(spec: KeySpec, keys: unknown): number {
  if (keys instanceof BigUint64Array) return keys.length;
  if (keys instanceof Uint32Array) return Math.floor(keys.length / spec.wordsPerKey);
  return 0;
}

/**
 * Host keys as the u32 words the kernels read (u64: low, high pairs), checked: the array type, the
 * word count, and no reserved key (a refused batch changes nothing). `scanReserved` false leaves
 * the reserved-key check to the caller (a large batch is checked on the GPU after its upload).
 */
export function hostKeyWords<K extends KeyType>(spec: KeySpec<K>, keys: unknown, where: string, scanReserved = true): Uint32Array {
  if (keys instanceof BigUint64Array) {
    if (spec.type !== 'u64') throw new InvalidArgumentError(`${where}: this table has u32 keys; a BigUint64Array needs keyType 'u64'`);
    return u64Words(keys);
  }
  if (!(keys instanceof Uint32Array)) {
    const accepted = spec.type === 'u64' ? 'a BigUint64Array, a Uint32Array of (low, high) pairs' : 'a Uint32Array';
    throw new InvalidArgumentError(`${where}: keys must be ${accepted} or a DeviceArray<'u32'>, got ${describeValue(keys)}`);
  }
  if (spec.wordsPerKey === 2 && keys.length % 2 !== 0) {
    throw new InvalidArgumentError(`${where}: u64 keys as a Uint32Array need (low, high) word pairs, but it has ${keys.length} words`);
  }
  if (scanReserved) {
    const reserved = reservedIndices(spec, keys);
    if (reserved.length > 0) throw new ReservedKeyError(where, reserved, spec.reservedNames, 'none');
  }
  return keys;
}

/** Checks a device key array (u32, whole keys) and returns its key count. */
export function deviceKeyCount(spec: KeySpec, keys: DeviceArray, where: string): number {
  if (keys.type !== 'u32') throw new InvalidArgumentError(`${where}: device keys must be a DeviceArray<'u32'>, got <'${keys.type}'>`);
  if (keys.length % spec.wordsPerKey !== 0) {
    throw new InvalidArgumentError(`${where}: u64 keys on the device need two words each, but the array has ${keys.length}`);
  }
  return keys.length / spec.wordsPerKey;
}

/**
 * Checks a values argument: a `Uint32Array` or a `DeviceArray<'u32'>` of `n` entries. Other typed
 * arrays are refused rather than reinterpreted.
 */
export function checkValues(values: unknown, n: number, where: string): void {
  if (values instanceof DeviceArray) {
    if (values.type !== 'u32')
      throw new InvalidArgumentError(`${where}: device values must be a DeviceArray<'u32'>, got <'${values.type}'>`);
  } else if (!(values instanceof Uint32Array)) {
    const hint =
      values instanceof Float32Array || values instanceof Int32Array
        ? ` (to store its bits, pass new Uint32Array(values.buffer, values.byteOffset, values.length))`
        : '';
    throw new InvalidArgumentError(`${where}: values must be a Uint32Array or a DeviceArray<'u32'>, got ${describeValue(values)}${hint}`);
  }
  if (values.length !== n) throw new InvalidArgumentError(`${where}: keys has ${n} entries but values has ${values.length}`);
}

/**
 * Checks a host find's `out` arrays: a Uint32Array and a Uint8Array, each with room for `n`
 * answers. Returns views of their first `n` entries (undefined without `out`).
 */
export function checkFindOut(
  out: { values: unknown; found: unknown } | undefined,
  n: number,
  where: string,
): { values: Uint32Array; found: Uint8Array } | undefined {
  if (out === undefined) return undefined;
  if (typeof out !== 'object' || out === null)
    throw new InvalidArgumentError(`${where}: out must be { values, found }, got ${describeValue(out)}`);
  const { values, found } = out;
  if (!(values instanceof Uint32Array))
    throw new InvalidArgumentError(`${where}: out.values must be a Uint32Array, got ${describeValue(values)}`);
  if (!(found instanceof Uint8Array))
    throw new InvalidArgumentError(`${where}: out.found must be a Uint8Array, got ${describeValue(found)}`);
  if (values.length < n)
    throw new InvalidArgumentError(`${where}: out.values has room for ${values.length} answers but the batch has ${n} keys`);
  if (found.length < n)
    throw new InvalidArgumentError(`${where}: out.found has room for ${found.length} answers but the batch has ${n} keys`);
  return { values: values.subarray(0, n), found: found.subarray(0, n) };
}

/**
 * How many distinct keys of host key words (`perKey` words a key, low word first) have a zero
 * flag: the new keys of a batch after a lookup pass. Sorted copies, not a Set: a Set holds at most
 * 2^24 entries in V8, and batches of 2^26 keys are ordinary.
 */
export function distinctUnflagged(words: Uint32Array, perKey: 1 | 2, flags: Uint32Array): number {
  const n = flags.length;
  // The unflagged keys' words, then (u64) as u64s: no bigint arithmetic a key (u64FromWords).
  const picked = new Uint32Array(n * perKey);
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (flags[i] !== 0) continue;
    picked[perKey * m] = words[perKey * i] as number;
    if (perKey === 2) picked[2 * m + 1] = words[2 * i + 1] as number;
    m++;
  }
  const sorted = perKey === 1 ? picked.subarray(0, m).sort() : u64FromWords(picked, m).sort();
  let distinct = 0;
  for (let j = 0; j < m; j++) if (j === 0 || sorted[j] !== sorted[j - 1]) distinct++;
  return distinct;
}
