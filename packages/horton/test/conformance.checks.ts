import type { Gpu } from '@gpuhash/core';
import { type DictionaryFactory, dictionaryChecks, type Rng } from '@gpuhash/testing';
import { HortonTable, RESERVED_KEYS } from '../src';
import { keysOnBuckets } from './keys';

/** Distinct keys whose primary bucket is one bucket of a table of `capacity` slots. */
function collidingKeys(capacity: number, n: number, rng: Rng): Uint32Array {
  return keysOnBuckets(rng, capacity, [rng.below(Math.max(1, capacity / 8))], n);
}

export const hortonFactory: DictionaryFactory<'u32'> = {
  name: 'horton',
  keyType: 'u32',
  reservedKeys: RESERVED_KEYS,
  capabilities: new Set(['resize', 'growth']),
  create: (gpu: Gpu, options) => HortonTable.create(gpu, options),
  collidingKeys,
};

export const bchtFactory: DictionaryFactory<'u32'> = {
  ...hortonFactory,
  name: 'horton bcht',
  create: (gpu: Gpu, options) =>
    HortonTable.create(gpu, options === null || typeof options !== 'object' ? options : { ...options, mode: 'bcht' }),
};

export const hortonConformance = dictionaryChecks(hortonFactory);
export const bchtConformance = dictionaryChecks(bchtFactory);
