import { InvalidArgumentError } from '../errors';
import { describeValue } from './ops';
import type { BulkInsertMode, DictionaryOptions } from './types';

/** A table's defaults for the shared options (each table's README lists them). */
export interface DictionaryDefaults {
  maxLoadFactor: number;
  growth: boolean;
  bulkInsert: BulkInsertMode;
}

/** `DictionaryOptions` with every default filled in: what a table was created with. */
export type ResolvedDictionaryOptions = Required<DictionaryOptions>;

const SHARED_KEYS = ['capacity', 'maxLoadFactor', 'growth', 'bulkInsert'] as const;

/**
 * Checks a table's options object and fills in the shared options' defaults: `options` must be an
 * object, `capacity` a positive integer (at most `maxCapacity`), `maxLoadFactor` in (0, 1],
 * `growth` a boolean, `bulkInsert` 'auto', 'always' or 'never', and no key outside the shared
 * ones and `ownKeys` (a misspelt option is an error, not a silent default).
 */
export function resolveDictionaryOptions(
  where: string,
  options: unknown,
  defaults: DictionaryDefaults,
  ownKeys: readonly string[],
): ResolvedDictionaryOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError(`${where}: options must be an object such as { capacity: 1 << 20 }, got ${describeValue(options)}`);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (o[key] === undefined) continue;
    if (!(SHARED_KEYS as readonly string[]).includes(key) && !ownKeys.includes(key)) {
      const known = [...SHARED_KEYS, ...ownKeys].join(', ');
      throw new InvalidArgumentError(`${where}: unknown option '${key}' (the options are ${known})`);
    }
  }
  const capacity = o.capacity;
  positiveInteger(where, 'capacity', capacity);
  const maxLoadFactor = o.maxLoadFactor ?? defaults.maxLoadFactor;
  if (!(typeof maxLoadFactor === 'number' && maxLoadFactor > 0 && maxLoadFactor <= 1)) {
    throw new InvalidArgumentError(`${where}: maxLoadFactor must be a number in (0, 1], got ${String(maxLoadFactor)}`);
  }
  const growth = o.growth ?? defaults.growth;
  oneOf(where, 'growth', growth, [true, false]);
  const bulkInsert = o.bulkInsert ?? defaults.bulkInsert;
  oneOf(where, 'bulkInsert', bulkInsert, ['auto', 'always', 'never']);
  return { capacity: capacity as number, maxLoadFactor, growth: growth as boolean, bulkInsert: bulkInsert as BulkInsertMode };
}

/** Throws unless `value` is a positive integer (a safe one). */
export function positiveInteger(where: string, name: string, value: unknown): asserts value is number {
  if (!(typeof value === 'number' && Number.isSafeInteger(value) && value >= 1)) {
    throw new InvalidArgumentError(`${where}: ${name} must be a positive integer, got ${String(value)}`);
  }
}

/** Throws unless `value` is an integer in [lo, hi]. */
export function integerIn(where: string, name: string, value: unknown, lo: number, hi: number): asserts value is number {
  if (!(typeof value === 'number' && Number.isInteger(value) && value >= lo && value <= hi)) {
    throw new InvalidArgumentError(`${where}: ${name} must be an integer in ${lo}..${hi}, got ${String(value)}`);
  }
}

/** Throws unless `value` is one of `allowed`. */
export function oneOf<T>(where: string, name: string, value: unknown, allowed: readonly T[]): asserts value is T {
  if (!allowed.includes(value as T)) {
    const list = allowed.map((a) => (typeof a === 'string' ? `'${a}'` : String(a))).join(', ');
    throw new InvalidArgumentError(
      `${where}: ${name} must be one of ${list}, got ${typeof value === 'string' ? `'${value}'` : String(value)}`,
    );
  }
}
