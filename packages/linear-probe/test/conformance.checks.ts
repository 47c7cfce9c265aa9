import type { Gpu } from '@gpuhash/core';
import { fmix32, fmix64U32 } from '@gpuhash/kernels';
import { type ConformanceOptions, type DictionaryFactory, dictionaryChecks, type Rng } from '@gpuhash/testing';
import { LinearProbeTable, RESERVED_KEYS } from '../src';

/** Distinct keys whose home slot (fmix32(k) mod capacity) is one slot, none of them reserved. */
function collidingKeys(capacity: number, n: number, rng: Rng): Uint32Array {
  let slots = 64;
  while (slots < capacity) slots *= 2;
  const target = rng.below(slots);
  const out = new Set<number>();
  while (out.size < n) {
    const k = rng.u32();
    if (k < 0xfffffffd && (fmix32(k) & (slots - 1)) === target) out.add(k);
  }
  return Uint32Array.from(out);
}

/** Distinct u64 keys, as (low, high) word pairs, whose home slot (fmix64 folded to 32 bits) is one slot. */
function collidingU64Keys(capacity: number, n: number, rng: Rng): Uint32Array {
  let slots = 64;
  while (slots < capacity) slots *= 2;
  const target = rng.below(slots);
  const seen = new Set<string>();
  const out = new Uint32Array(2 * n);
  while (seen.size < n) {
    const lo = rng.u32();
    const hi = rng.u32();
    if ((fmix64U32(lo, hi) & (slots - 1)) !== target || seen.has(`${lo},${hi}`)) continue;
    out[2 * seen.size] = lo;
    out[2 * seen.size + 1] = hi;
    seen.add(`${lo},${hi}`);
  }
  return out;
}

/** The options as given (malformed ones included); u64 adds its keyType to an options object. */
function withKeyType(options: ConformanceOptions, keyType: 'u32' | 'u64'): ConformanceOptions {
  if (keyType === 'u32' || options === null || typeof options !== 'object') return options;
  return { ...options, keyType } as ConformanceOptions;
}

export const linearProbeFactory: DictionaryFactory<'u32'> = {
  name: 'linear-probe',
  keyType: 'u32',
  reservedKeys: RESERVED_KEYS,
  capabilities: new Set(['apply', 'device-apply', 'resize', 'bulk-insert', 'growth']),
  create: (gpu: Gpu, options) => LinearProbeTable.create(gpu, options),
  collidingKeys,
};

export const linearProbeU64Factory: DictionaryFactory<'u64'> = {
  name: 'linear-probe u64',
  keyType: 'u64',
  reservedKeys: [],
  capabilities: new Set(['apply', 'device-apply', 'u64', 'resize', 'growth']),
  create: (gpu: Gpu, options) => LinearProbeTable.create<'u64'>(gpu, withKeyType(options, 'u64')),
  collidingKeys: collidingU64Keys,
};

export const linearProbeConformance = dictionaryChecks(linearProbeFactory);
export const linearProbeU64Conformance = dictionaryChecks(linearProbeU64Factory);
