import { InvalidArgumentError } from './errors';
import type { Binding } from './kernel';

/**
 * A kernel's bindings, declared once as a record of names: the WGSL `@group(0) @binding(i)`
 * lines and the positional bind-group entries both come from it, in the record's order.
 */

/** The kernel's `Params` uniform (at most one per kernel). */
export interface UniformBindingSpec {
  readonly kind: 'uniform';
}

/** Access of a storage binding, as WGSL spells it. */
export type StorageAccess = 'read' | 'read_write';

/** `var<storage, access> name: array<element>` */
export interface StorageBindingSpec {
  readonly kind: 'storage';
  readonly access: StorageAccess;
  /** WGSL element type: `u32`, `atomic<u32>`, `vec2<u32>`, ... */
  readonly element: string;
  /**
   * Bindings the array is split across (default 1): an array past `maxStorageBufferBindingSize`
   * is bound as windows `NAME_0 .. NAME_{windows-1}`, given as a list of buffers, and kernel code
   * reaches it through composeWgsl's `windows` accessors (@gpuhash/kernels, windows.ts).
   */
  readonly windows?: number;
}

/** One binding of a kernel: the params uniform, or a storage array with its access and element type. */
export type BindingSpec = UniformBindingSpec | StorageBindingSpec;
/** A kernel's bindings by name, in binding order (`@binding(0)` first). */
export type BindingsLayout = Readonly<Record<string, BindingSpec>>;

/** The params uniform binding. */
export function uniform(): UniformBindingSpec {
  return { kind: 'uniform' };
}

/** A storage array binding: `storage('read_write', 'atomic<u32>')`; with `windows` > 1, that many bindings. */
export function storage(access: StorageAccess, element: string, windows = 1): StorageBindingSpec {
  return windows === 1 ? { kind: 'storage', access, element } : { kind: 'storage', access, element, windows };
}

/** Bindings a spec takes: its windows for a storage array, else 1. */
export function windowsOf(spec: BindingSpec): number {
  return spec.kind === 'storage' ? (spec.windows ?? 1) : 1;
}

/** The WGSL names a binding is declared under: the name, or its windows' names. */
export function declaredBindingNames(name: string, spec: BindingSpec): string[] {
  const w = windowsOf(spec);
  return w === 1 ? [name] : Array.from({ length: w }, (_, k) => `${name}_${k}`);
}

/** Names of the uniform binding(s) of a layout (at most one). */
export type UniformNames<B extends BindingsLayout> = { [K in keyof B]: B[K] extends UniformBindingSpec ? K : never }[keyof B];
/** Names of the storage bindings of a layout. */
export type StorageNames<B extends BindingsLayout> = Exclude<keyof B, UniformNames<B>>;

/**
 * Buffers by binding name: every declared name, no other; a list of buffers for a windowed array.
 * Buffers may repeat (aliases), within WebGPU's rules.
 */
export type BindingRecord<B extends BindingsLayout> = { readonly [K in keyof B]: Binding | readonly Binding[] };

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ELEMENT = /^[A-Za-z_][A-Za-z0-9_<>, ]*$/;

/** Throws unless the layout is well formed; returns the name of its uniform binding, if any. */
export function checkBindingsLayout(bindings: BindingsLayout, hasParams: boolean, where: string): string | undefined {
  const names = Object.keys(bindings);
  if (names.length === 0) throw new InvalidArgumentError(`${where}: a kernel needs at least one binding`);
  let uniformName: string | undefined;
  for (const [name, spec] of Object.entries(bindings)) {
    if (!IDENTIFIER.test(name)) throw new InvalidArgumentError(`${where}: binding name '${name}' is not a WGSL identifier`);
    if (spec.kind === 'uniform') {
      if (uniformName !== undefined)
        throw new InvalidArgumentError(
          `${where}: bindings '${uniformName}' and '${name}' are both uniform; a kernel has one params uniform`,
        );
      uniformName = name;
    } else if (spec.kind === 'storage') {
      if (spec.access !== 'read' && spec.access !== 'read_write')
        throw new InvalidArgumentError(`${where}: binding '${name}' has access '${String(spec.access)}'; use 'read' or 'read_write'`);
      if (!ELEMENT.test(spec.element))
        throw new InvalidArgumentError(`${where}: binding '${name}' has element type '${spec.element}', which is not a WGSL type`);
      const w = spec.windows ?? 1;
      if (!Number.isInteger(w) || w < 1)
        throw new InvalidArgumentError(`${where}: binding '${name}' has ${w} windows; give a positive integer`);
    } else {
      throw new InvalidArgumentError(`${where}: binding '${name}' is neither uniform() nor storage(...)`);
    }
  }
  if (uniformName !== undefined && !hasParams)
    throw new InvalidArgumentError(`${where}: binding '${uniformName}' is uniform but the kernel declares no params fields`);
  if (uniformName === undefined && hasParams)
    throw new InvalidArgumentError(`${where}: the kernel declares params fields but no uniform() binding to hold them`);
  return uniformName;
}

/** The `@group(0) @binding(i) var...` lines, in declaration order. */
export function bindingDeclarations(bindings: BindingsLayout, structName: string): string[] {
  const lines: string[] = [];
  for (const [name, spec] of Object.entries(bindings)) {
    for (const declared of declaredBindingNames(name, spec)) {
      const decl =
        spec.kind === 'uniform'
          ? `var<uniform> ${declared}: ${structName}`
          : `var<storage, ${spec.access}> ${declared}: array<${spec.element}>`;
      lines.push(`@group(0) @binding(${lines.length}) ${decl};`);
    }
  }
  return lines;
}

function bufferOf(b: Binding): GPUBuffer {
  return 'buffer' in b ? b.buffer : b;
}

/** Whether two bindings of one buffer share a byte (a binding without a size runs to the buffer's end). */
function overlaps(a: Binding, b: Binding): boolean {
  const range = (x: Binding): [number, number] => {
    if (!('buffer' in x)) return [0, x.size];
    const offset = x.offset ?? 0;
    return [offset, offset + (x.size ?? x.buffer.size - offset)];
  };
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

/**
 * The positional entries of a record of buffers by name. Throws InvalidArgumentError on a missing
 * or unknown name, and on a buffer bound read_write that is also bound another way (WebGPU
 * rejects that pass; say which bindings clash before it does).
 */
export function orderBindings(
  bindings: BindingsLayout,
  record: Readonly<Record<string, Binding | readonly Binding[] | undefined>>,
  where: string,
): Binding[] {
  const names = Object.keys(bindings);
  const missing = names.filter((n) => !Object.hasOwn(record, n) || record[n] === undefined);
  const extra = Object.keys(record).filter((n) => !Object.hasOwn(bindings, n));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [
      missing.length > 0 ? `missing ${missing.map((n) => `'${n}'`).join(', ')}` : '',
      extra.length > 0 ? `unknown ${extra.map((n) => `'${n}'`).join(', ')}` : '',
    ].filter(Boolean);
    throw new InvalidArgumentError(`${where}: bindings ${parts.join('; ')} (the kernel binds ${names.join(', ')})`);
  }
  const entries: Binding[] = [];
  const slots: { name: string; spec: BindingSpec }[] = [];
  for (const n of names) {
    const spec = bindings[n] as BindingSpec;
    const given = record[n] as Binding | readonly Binding[];
    const list = Array.isArray(given) ? (given as readonly Binding[]) : [given as Binding];
    const w = windowsOf(spec);
    if (list.length !== w)
      throw new InvalidArgumentError(
        `${where}: binding '${n}' takes ${w === 1 ? 'one buffer' : `a list of ${w} windows`}, got ${Array.isArray(given) ? `a list of ${list.length}` : 'one buffer'}`,
      );
    declaredBindingNames(n, spec).forEach((declared, k) => {
      entries.push(list[k] as Binding);
      slots.push({ name: declared, spec });
    });
  }
  checkWritableAliases(slots, entries, where);
  return entries;
}

function checkWritableAliases(slots: readonly { name: string; spec: BindingSpec }[], entries: Binding[], where: string): void {
  const names = slots.map((s) => s.name);
  for (let i = 0; i < entries.length; i++) {
    const spec = (slots[i] as { spec: BindingSpec }).spec;
    if (spec.kind !== 'storage' || spec.access !== 'read_write') continue;
    const buffer = bufferOf(entries[i] as Binding);
    for (let j = 0; j < entries.length; j++) {
      if (j === i || bufferOf(entries[j] as Binding) !== buffer) continue;
      const other = (slots[j] as { spec: BindingSpec }).spec;
      if (other.kind === 'storage' && other.access === 'read_write') {
        if (!overlaps(entries[i] as Binding, entries[j] as Binding)) continue;
        throw new InvalidArgumentError(
          `${where}: one buffer is bound for writing as '${names[i]}' and as '${names[j]}' over overlapping ranges; WebGPU forbids that in one pass: bind different buffers or disjoint ranges`,
        );
      }
      throw new InvalidArgumentError(
        `${where}: one buffer is bound as '${names[i]}' (read_write) and as '${names[j]}' (${other.kind === 'uniform' ? 'uniform' : 'read'}); WebGPU forbids that in one pass: bind a different buffer to one of them`,
      );
    }
  }
}
