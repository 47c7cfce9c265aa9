import type { Gpu } from '@gpuhash/core';
import { type DictionaryFactory, dictionaryChecks, type Rng } from '@gpuhash/testing';
import { HiveTable, RESERVED_KEYS, splitPointerFor } from '../src';
import { keysWhere } from './keys';

const BUCKET_SLOTS = 32;

/** Distinct keys whose two candidate buckets are both one bucket of a table of `capacity` slots. */
function collidingKeys(capacity: number, n: number, rng: Rng): Uint32Array {
  const p = splitPointerFor(Math.max(1, Math.ceil(capacity / BUCKET_SLOTS)));
  const target = rng.below(p.n0);
  return keysWhere(rng, p, n, (b1, b2) => b1 === target && b2 === target);
}

export const hiveFactory: DictionaryFactory<'u32'> = {
  name: 'hive',
  keyType: 'u32',
  reservedKeys: RESERVED_KEYS,
  capabilities: new Set(['apply', 'device-apply', 'resize', 'bulk-insert', 'growth']),
  create: (gpu: Gpu, options) => HiveTable.create(gpu, options),
  collidingKeys,
};

export const hiveConformance = dictionaryChecks(hiveFactory);
