import { InvalidArgumentError } from './errors';

/**
 * A kernel's `Params` uniform, declared once: field names and scalar types, in order. The WGSL
 * struct and the host packing both come from it, with WGSL's uniform layout (each scalar at its
 * 4-byte alignment, the struct padded to a multiple of 16 bytes).
 */
export type ParamType = 'u32' | 'i32' | 'f32';

/** A field's type, or its type and the value packed when the caller leaves it out. */
export type ParamField = ParamType | { readonly type: ParamType; readonly default: number };

/** Field name -> field, in declaration order (names are WGSL identifiers, so object order is kept). */
export type ParamsLayout = Readonly<Record<string, ParamField>>;

type HasDefault<F> = F extends { readonly default: number } ? true : false;

/** The values `packParams` takes: every field, except that fields with defaults may be left out. */
export type ParamValues<P extends ParamsLayout> = { [K in keyof P as HasDefault<P[K]> extends true ? never : K]: number } & {
  [K in keyof P as HasDefault<P[K]> extends true ? K : never]?: number;
};

/** One field of a kernel's params uniform: its name, WGSL type, byte offset and default. */
export interface ParamSlot {
  readonly name: string;
  readonly type: ParamType;
  /** Byte offset in the uniform. */
  readonly offset: number;
  readonly default: number | undefined;
}

/** Where each field lives, and the padded size of the struct. */
export interface UniformLayout {
  readonly fields: readonly ParamSlot[];
  readonly bytes: number;
}

const SCALAR_BYTES = 4;
/** Uniform buffers hold structs in 16-byte units (WGSL's uniform address-space rule for struct sizes). */
const UNIFORM_ALIGN = 16;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function uniformLayout(params: ParamsLayout, where: string): UniformLayout {
  const fields: ParamSlot[] = [];
  let offset = 0;
  for (const [name, field] of Object.entries(params)) {
    if (!IDENTIFIER.test(name)) throw new InvalidArgumentError(`${where}: params field '${name}' is not a WGSL identifier`);
    const type = typeof field === 'string' ? field : field.type;
    if (type !== 'u32' && type !== 'i32' && type !== 'f32') {
      throw new InvalidArgumentError(`${where}: params field '${name}' has type '${String(type)}'; use 'u32', 'i32' or 'f32'`);
    }
    const fallback = typeof field === 'string' ? undefined : field.default;
    if (fallback !== undefined) checkValue(type, fallback, `${where}: default of params field '${name}'`);
    // Scalars align to their size; offsets only grow.
    offset = Math.ceil(offset / SCALAR_BYTES) * SCALAR_BYTES;
    fields.push({ name, type, offset, default: fallback });
    offset += SCALAR_BYTES;
  }
  return { fields, bytes: Math.max(UNIFORM_ALIGN, Math.ceil(offset / UNIFORM_ALIGN) * UNIFORM_ALIGN) };
}

/** `struct Params { n: u32, mask: u32 }` */
export function paramsStruct(structName: string, layout: UniformLayout): string {
  return `struct ${structName} { ${layout.fields.map((f) => `${f.name}: ${f.type}`).join(', ')} }`;
}

function checkValue(type: ParamType, value: unknown, what: string): void {
  if (typeof value !== 'number') throw new InvalidArgumentError(`${what} must be a number, got ${typeof value}`);
  switch (type) {
    case 'u32':
      if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff)
        throw new InvalidArgumentError(`${what} must be a u32, got ${value}`);
      return;
    case 'i32':
      if (!Number.isInteger(value) || value < -0x8000_0000 || value > 0x7fff_ffff)
        throw new InvalidArgumentError(`${what} must be an i32, got ${value}`);
      return;
    case 'f32':
      if (!Number.isFinite(value)) throw new InvalidArgumentError(`${what} must be a finite f32, got ${value}`);
  }
}

/**
 * The uniform's bytes as u32 words (i32 and f32 fields bit-cast, little-endian as WebGPU is).
 * Throws InvalidArgumentError on a missing field (without default), an unknown one, or a value
 * its type cannot hold.
 */
export function packUniform(layout: UniformLayout, values: Readonly<Record<string, number | undefined>>, where: string): Uint32Array {
  const known = new Set(layout.fields.map((f) => f.name));
  const extra = Object.keys(values).filter((k) => !known.has(k));
  if (extra.length > 0) {
    throw new InvalidArgumentError(
      `${where}: unknown params field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `'${k}'`).join(', ')} (declared: ${[...known].join(', ') || 'none'})`,
    );
  }
  const words = new Uint32Array(layout.bytes / 4);
  const view = new DataView(words.buffer);
  for (const f of layout.fields) {
    const given = Object.hasOwn(values, f.name) ? values[f.name] : undefined;
    const value = given ?? f.default;
    if (value === undefined) throw new InvalidArgumentError(`${where}: params field '${f.name}' is missing`);
    checkValue(f.type, value, `${where}: params field '${f.name}'`);
    if (f.type === 'u32') view.setUint32(f.offset, value, true);
    else if (f.type === 'i32') view.setInt32(f.offset, value, true);
    else view.setFloat32(f.offset, value, true);
  }
  return words;
}
