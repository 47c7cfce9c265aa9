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

/**
 * Tables split into 2 storage bindings from 128 slots up, as tables past one binding are on a
 * GPU (2^28 u32 slots and more): every kernel reaches the slots through the window accessors.
 * Mixed batches are left out here: their kernel over windows compiles for about a minute on
 * SwiftShader. The GPU checks cover them (stress.checks.ts, tables in 4 bindings).
 */
const WINDOWS = 2;

/** The options as given, with the test-only window split added to an options object. */
function windowed(options: ConformanceOptions): ConformanceOptions {
  if (options === null || typeof options !== 'object') return options;
  return { ...options, windows: WINDOWS } as ConformanceOptions;
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

/** A factory's capabilities without mixed batches. */
const withoutApply = (caps: ReadonlySet<string>) => new Set([...caps].filter((c) => c !== 'apply' && c !== 'device-apply'));

export const linearProbeWindowedFactory: DictionaryFactory<'u32'> = {
  ...linearProbeFactory,
  capabilities: withoutApply(linearProbeFactory.capabilities) as DictionaryFactory<'u32'>['capabilities'],
  name: 'linear-probe windowed',
  create: (gpu: Gpu, options) => LinearProbeTable.create(gpu, windowed(options)),
};

export const linearProbeU64WindowedFactory: DictionaryFactory<'u64'> = {
  ...linearProbeU64Factory,
  capabilities: withoutApply(linearProbeU64Factory.capabilities) as DictionaryFactory<'u64'>['capabilities'],
  name: 'linear-probe u64 windowed',
  create: (gpu: Gpu, options) => LinearProbeTable.create<'u64'>(gpu, windowed(withKeyType(options, 'u64'))),
};

export const linearProbeConformance = dictionaryChecks(linearProbeFactory);
export const linearProbeU64Conformance = dictionaryChecks(linearProbeU64Factory);
export const linearProbeWindowedConformance = dictionaryChecks(linearProbeWindowedFactory);
export const linearProbeU64WindowedConformance = dictionaryChecks(linearProbeU64WindowedFactory);
