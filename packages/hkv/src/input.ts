import { DeviceArray, describeValue, InvalidArgumentError, ReservedKeyError, u64Words } from '@gpuhash/core';
import { isReservedKey, RESERVED_NAMES } from './layout';

/** Host keys as (lo, hi) words, checked: the array type, whole pairs, no reserved key. */
export function hostKeyWords(keys: unknown, where: string): Uint32Array {
  let words: Uint32Array;
  if (keys instanceof BigUint64Array) {
    words = u64Words(keys);
  } else if (keys instanceof Uint32Array) {
    if (keys.length % 2 !== 0) {
      throw new InvalidArgumentError(`${where}: u64 keys as a Uint32Array need (low, high) word pairs, but it has ${keys.length} words`);
    }
    words = keys;
  } else {
    throw new InvalidArgumentError(
      `${where}: keys must be a BigUint64Array, a Uint32Array of (low, high) pairs or a DeviceArray<'u32'>, got ${describeValue(keys)}`,
    );
  }
  let reserved: number[] | undefined;
  for (let i = 0; i < words.length / 2; i++) {
    if (isReservedKey(words[2 * i] as number, words[2 * i + 1] as number)) (reserved ??= []).push(i);
  }
  if (reserved) throw new ReservedKeyError(where, Uint32Array.from(reserved), RESERVED_NAMES, 'none');
  return words;
}

/** Key count of keys given either way (host or device). */
export function keyCount(keys: unknown, where: string): number {
  if (keys instanceof DeviceArray) {
    if (keys.type !== 'u32') throw new InvalidArgumentError(`${where}: device keys must be a DeviceArray<'u32'>, got <'${keys.type}'>`);
    if (keys.length % 2 !== 0)
      throw new InvalidArgumentError(`${where}: u64 keys on the device need two words each, but the array has ${keys.length}`);
    return keys.length / 2;
  }
  if (keys instanceof BigUint64Array) return keys.length;
  if (keys instanceof Uint32Array) return keys.length / 2;
  return hostKeyWords(keys, where).length / 2;
}

/** Scores as (lo, hi) words for n keys. */
export function scoreWords(scores: unknown, n: number, where: string): Uint32Array | DeviceArray<'u32'> {
  if (scores instanceof DeviceArray) {
    if (scores.type !== 'u32' || scores.length !== 2 * n)
      throw new InvalidArgumentError(
        `${where}: device scores must be a DeviceArray<'u32'> of 2 words per key (${2 * n}), got <'${scores.type}'> of ${scores.length}`,
      );
    return scores as DeviceArray<'u32'>;
  }
  if (scores instanceof BigUint64Array) {
    if (scores.length !== n) throw new InvalidArgumentError(`${where}: keys has ${n} entries but scores has ${scores.length}`);
    return u64Words(scores);
  }
  if (scores instanceof Uint32Array) {
    if (scores.length !== 2 * n)
      throw new InvalidArgumentError(`${where}: scores as a Uint32Array need 2 words per key (${2 * n}), got ${scores.length}`);
    return scores;
  }
  throw new InvalidArgumentError(
    `${where}: scores must be a BigUint64Array, a Uint32Array of (low, high) pairs or a DeviceArray<'u32'>, got ${describeValue(scores)}`,
  );
}

/** Checks values: n * dim floats, host or device. */
export function checkValues(values: unknown, n: number, dim: number, where: string): void {
  if (values instanceof DeviceArray) {
    if (values.type !== 'f32')
      throw new InvalidArgumentError(`${where}: device values must be a DeviceArray<'f32'>, got <'${values.type}'>`);
  } else if (!(values instanceof Float32Array)) {
    throw new InvalidArgumentError(
      `${where}: values must be a Float32Array of n * dim floats (or a DeviceArray<'f32'>), got ${describeValue(values)}`,
    );
  }
  if (values.length !== n * dim) {
    throw new InvalidArgumentError(
      `${where}: ${n} keys of dim ${dim} need ${n * dim} floats, but values has ${values.length}` +
        (values.length % dim === 0 ? ` (${values.length / dim} rows)` : ` (not a multiple of dim ${dim}: is dim right?)`),
    );
  }
}

/** (lo, hi) words of a bigint taken mod 2^64. */
export function bigWords(x: bigint): [number, number] {
  const v = BigInt.asUintN(64, x);
  return [Number(v & 0xffffffffn), Number(v >> 32n)];
}
