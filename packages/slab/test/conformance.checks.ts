import type { Gpu } from '@gpuhash/core';
import { universalHash } from '@gpuhash/kernels';
import { type DictionaryFactory, dictionaryChecks, type Rng } from '@gpuhash/testing';
import { bucketsFor, RESERVED_KEYS, SLAB_DEFAULTS, SlabHashMap } from '../src';
import { hashFor } from '../src/engine';

/** n distinct keys of one bucket of a map created with `capacity` (and the default hash seed): one long chain. */
export function collidingKeys(capacity: number, n: number, rng: Rng): Uint32Array {
  const buckets = bucketsFor(capacity, 'map', SLAB_DEFAULTS.targetChainLength);
  const { a, b } = hashFor(SLAB_DEFAULTS.seed);
  const target = rng.below(buckets);
  const out = new Set<number>();
  while (out.size < n) {
    const k = rng.u32();
    if (k < RESERVED_KEYS[0]! && universalHash(k, a, b, buckets) === target) out.add(k);
  }
  return Uint32Array.from(out);
}

export const slabMapFactory: DictionaryFactory<'u32'> = {
  name: 'slab map',
  keyType: 'u32',
  reservedKeys: RESERVED_KEYS,
  capabilities: new Set(['apply', 'device-apply', 'resize', 'growth']),
  create: (gpu: Gpu, options) => SlabHashMap.create(gpu, options),
  collidingKeys,
};

export const slabConformance = dictionaryChecks(slabMapFactory);
