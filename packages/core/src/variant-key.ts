import { InvalidArgumentError } from './errors';

/**
 * What specialises a kernel: constants and flags, as a plain object of strings, numbers, booleans,
 * arrays and nested plain objects. The pipeline cache key is derived from its sorted fields, so
 * the same variant written in any key order names one pipeline, and no key is written by hand.
 */
export type VariantValue = string | number | boolean | undefined | readonly VariantValue[] | { readonly [key: string]: VariantValue };
/** A kernel variant: the plain object of `VariantValue` fields that specialises one pipeline. */
export type Variant = { readonly [key: string]: VariantValue };

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function encode(value: VariantValue, path: string, where: string): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
    case 'boolean':
      return String(value);
    case 'object':
      if (value === null) break;
      if (Array.isArray(value)) return `[${value.map((v, i) => encode(v, `${path}[${i}]`, where)).join(',')}]`;
      if (isPlainObject(value)) return `{${fields(value as Variant, path, where)}}`;
      break;
  }
  throw new InvalidArgumentError(
    `${where}: variant field '${path}' is ${value === null ? 'null' : typeof value === 'object' ? `a ${value.constructor?.name ?? 'non-plain'} object` : `a ${typeof value}`}; ` +
      'use strings, numbers, booleans, arrays or plain objects (pass a name, not an object, for a policy)',
  );
}

function fields(variant: Variant, prefix: string, where: string): string {
  return Object.keys(variant)
    .filter((k) => variant[k] !== undefined)
    .sort()
    .map((k) => `${k}=${encode(variant[k], prefix ? `${prefix}.${k}` : k, where)}`)
    .join(',');
}

/** `{ b: true, a: 2 }` -> `a=2,b=true`; `{}` -> ''. Undefined fields are left out. */
export function variantKey(variant: Variant, where = 'variant'): string {
  if (typeof variant !== 'object' || variant === null || Array.isArray(variant) || !isPlainObject(variant)) {
    throw new InvalidArgumentError(`${where}: a variant must be a plain object`);
  }
  return fields(variant, '', where);
}
