import { undeclaredNeeds } from './declared-names';
import { rewriteWindowedAccesses, type StorageWindows, windowAccessors } from './windows';

/**
 * WGSL composition: a shader is its own code plus the modules it requires, each included once,
 * in dependency order, after the `enable` directives they need and the constants that specialise
 * this pipeline.
 */
export interface WgslModule {
  /** Unique name; two modules with one name must have the same code. */
  readonly name: string;
  readonly code: string;
  readonly requires?: readonly WgslModule[];
  /** Extensions the code needs, e.g. 'subgroups'. */
  readonly enables?: readonly string[];
  /**
   * Identifiers the code uses but the including kernel must declare (its bindings such as
   * `params` or `slots`, or constants). composeWgsl checks each is declared somewhere.
   */
  readonly needs?: readonly string[];
}

/** What a module depends on besides its code. */
export interface WgslModuleDeps {
  requires?: readonly WgslModule[];
  enables?: readonly string[];
  needs?: readonly string[];
}

/** A module; the third argument is its dependencies, or (older form) its required modules followed by `enables`. */
export function wgslModule(name: string, code: string, deps?: WgslModuleDeps): WgslModule;
export function wgslModule(name: string, code: string, requires?: readonly WgslModule[], enables?: readonly string[]): WgslModule;
export function wgslModule(
  name: string,
  code: string,
  deps: WgslModuleDeps | readonly WgslModule[] = [],
  enables: readonly string[] = [],
): WgslModule {
  if (Array.isArray(deps)) return { name, code, requires: deps, enables };
  const d = deps as WgslModuleDeps;
  for (const id of d.needs ?? []) {
    if (!IDENTIFIER.test(id)) throw new WgslCompositionError(`WGSL module '${name}' needs '${id}', which is not an identifier`);
  }
  return { name, code, requires: d.requires ?? [], enables: d.enables ?? [], needs: d.needs ?? [] };
}

/** A shader could not be composed: a module clash, a cycle, or an identifier a module needs that nothing declares. */
export class WgslCompositionError extends Error {
  /** The module at fault, when there is one. */
  readonly module: string | undefined;
  /** The identifier a module needs that nothing declares. */
  readonly identifier: string | undefined;
  constructor(message: string, module?: string, identifier?: string) {
    super(message);
    this.name = 'WgslCompositionError';
    this.module = module;
    this.identifier = identifier;
  }
}

/** A pipeline constant: a number (u32 when a non-negative integer, i32 when negative), a bool, or an explicit type. */
export type ConstantValue = number | boolean | { type: 'u32' | 'i32' | 'f32'; value: number };

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A WGSL `const` declaration for a name and value: `bool` for booleans, `u32` for non-negative
 * numbers and `i32` for negative ones, or the type a `{ type, value }` names. Throws when the name
 * is not an identifier or the value does not fit its type.
 */
export function constantDeclaration(name: string, value: ConstantValue): string {
  if (!IDENTIFIER.test(name)) throw new Error(`WGSL constant name '${name}' is not an identifier`);
  if (typeof value === 'boolean') return `const ${name}: bool = ${value};`;
  const typed = typeof value === 'number' ? { type: value < 0 ? 'i32' : 'u32', value } : value;
  const v = typed.value;
  if (!Number.isFinite(v)) throw new Error(`WGSL constant ${name} must be finite, got ${v}`);
  switch (typed.type) {
    case 'u32':
      if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`WGSL constant ${name}: ${v} is not a u32`);
      return `const ${name}: u32 = ${v}u;`;
    case 'i32':
      if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) throw new Error(`WGSL constant ${name}: ${v} is not an i32`);
      return `const ${name}: i32 = ${v}i;`;
    default:
      return `const ${name}: f32 = ${Number.isInteger(v) ? `${v}.0` : `${v}`};`;
  }
}

/** Options of `composeWgsl`: the modules the main code uses, and constants to declare before it. */
export interface ComposeOptions {
  /** Modules the main code calls into (their own requirements are followed). */
  modules?: readonly WgslModule[];
  /** Constants emitted before all code: one pipeline per distinct set. */
  constants?: Readonly<Record<string, ConstantValue>>;
  /** Extra `enable` directives. */
  enables?: readonly string[];
  /**
   * Arrays bound as several windows (windows.ts): their accesses are rewritten into accessor
   * calls, and the accessors appended. Leave it out (or empty) for arrays in one binding.
   */
  windows?: readonly StorageWindows[];
}

/** Builds a complete WGSL source from a main body and its modules. */
export function composeWgsl(main: string, options: ComposeOptions = {}): string {
  const ordered: WgslModule[] = [];
  const byName = new Map<string, WgslModule>();
  const visiting = new Set<string>();
  const visit = (m: WgslModule) => {
    const seen = byName.get(m.name);
    if (seen) {
      if (seen.code !== m.code) throw new WgslCompositionError(`two different WGSL modules are named '${m.name}'`);
      return;
    }
    if (visiting.has(m.name)) throw new WgslCompositionError(`WGSL module '${m.name}' requires itself`, m.name);
    visiting.add(m.name);
    for (const r of m.requires ?? []) visit(r);
    visiting.delete(m.name);
    byName.set(m.name, m);
    ordered.push(m);
  };
  for (const m of options.modules ?? []) visit(m);

  const enables = new Set(options.enables ?? []);
  for (const m of ordered) for (const e of m.enables ?? []) enables.add(e);
  const header: string[] = [...enables].sort().map((e) => `enable ${e};`);
  // Cooperative code runs subgroup operations in loops whose trip count differs per lane group;
  // the lanes of one subgroup stay converged by construction, which the analysis cannot see.
  if (enables.has('subgroups')) header.push('diagnostic(off, subgroup_uniformity);');
  const constants = Object.entries(options.constants ?? {}).map(([k, v]) => constantDeclaration(k, v));
  const parts = [header.join('\n'), constants.join('\n'), ...ordered.map((m) => `// --- ${m.name}\n${m.code.trim()}`), main.trim()];
  const windows = options.windows ?? [];
  let source = `${parts.filter((p) => p.length > 0).join('\n\n')}\n`;
  if (windows.length > 0) {
    source = rewriteWindowedAccesses(source, windows);
    source = `${source}\n${windowAccessors(source, windows)}\n`;
  }
  checkNeeds(
    ordered,
    source,
    windows.map((w) => w.name),
  );
  return source;
}

/** Throws a WgslCompositionError naming the first module whose needs the source does not declare. */
function checkNeeds(modules: readonly WgslModule[], source: string, windowed: readonly string[]): void {
  if (!modules.some((m) => (m.needs ?? []).length > 0)) return;
  for (const m of modules) {
    // A windowed array is declared by its windows and accessors.
    const missing = undeclaredNeeds(source, m.needs ?? []).filter((id) => !windowed.includes(id));
    if (missing.length > 0) {
      const id = missing[0] as string;
      throw new WgslCompositionError(
        `WGSL module '${m.name}' needs '${id}', but the composed shader declares no ${missing.map((x) => `'${x}'`).join(', ')} ` +
          `(declare it in the kernel: a binding, a const, a fn, a struct)`,
        m.name,
        id,
      );
    }
  }
}

/** A short stable hash of a string (FNV-1a), for pipeline cache keys built from sources. */
export function sourceKey(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
