import { stripWgslComments } from './declared-names';

/**
 * Storage arrays larger than one binding. A storage binding holds at most
 * `maxStorageBufferBindingSize` bytes (2^31 - 4 on NVIDIA's Vulkan driver), so a larger array is
 * split into `count` windows of 2^elementsLog2 elements, bound as `NAME_0 .. NAME_{count-1}`.
 *
 * Kernel code keeps indexing the array by its own name (`slots[i]`, `atomicLoad(&slots[i])`).
 * composeWgsl's `windows` option rewrites each access into a call of a generated accessor that
 * splits the index (window `i >> elementsLog2`, offset `i & (2^elementsLog2 - 1)`) and switches on
 * the window: WGSL cannot index bindings at run time. A kernel whose arrays fit one binding is
 * composed without the option, so its source is unchanged.
 */
export interface StorageWindows {
  /** The array's name in kernel code; its windows are bound as `${name}_0` and on. */
  readonly name: string;
  /** WGSL element type as bound: `u32`, `atomic<u32>`, `vec4<u32>`. */
  readonly element: string;
  /** Windows (bindings), at least 2. */
  readonly count: number;
  /** log2 of the elements one window holds (every window but the last is full). */
  readonly elementsLog2: number;
}

const ELEMENT_BYTES_LOG2: Readonly<Record<string, number>> = { u32: 2, 'atomic<u32>': 2, 'vec2<u32>': 3, 'vec4<u32>': 4 };

/**
 * The StorageWindows of several views of one array (name → element type) split into `count`
 * windows of 2^windowBytesLog2 bytes each, so every view splits at the same byte boundaries: none
 * when `count` is 1 (the kernel then binds each view whole and composes unchanged).
 */
export function windowedViews(count: number, windowBytesLog2: number, views: Readonly<Record<string, string>>): StorageWindows[] {
  if (count === 1) return [];
  return Object.entries(views).map(([name, element]) => {
    const elementLog2 = ELEMENT_BYTES_LOG2[element];
    if (elementLog2 === undefined) throw new WindowedAccessError(`${name}: no windowed view as ${element}`);
    return { name, element, count, elementsLog2: windowBytesLog2 - elementLog2 };
  });
}

/** The binding names of an array's windows. */
export function windowNames(name: string, count: number): string[] {
  return Array.from({ length: count }, (_, k) => `${name}_${k}`);
}

/** Atomic builtins an accessor can stand in for; every other one names no array element. */
const ATOMIC_OPS = new Set([
  'atomicLoad',
  'atomicStore',
  'atomicAdd',
  'atomicSub',
  'atomicMax',
  'atomicMin',
  'atomicAnd',
  'atomicOr',
  'atomicXor',
  'atomicExchange',
  'atomicCompareExchangeWeak',
]);

/** The error of an access the rewrite cannot express (an unsupported form, unbalanced brackets). */
export class WindowedAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WindowedAccessError';
  }
}

/** The position of the bracket closing the one opened at `open` ('[' or '('), skipping nested ones. */
function closing(source: string, open: number): number {
  let depth = 0;
  for (let at = open; at < source.length; at++) {
    const c = source[at];
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0) return at;
    }
  }
  throw new WindowedAccessError(`unbalanced brackets after offset ${open}`);
}

/** The end (the ';') of the statement whose value starts at `from`. */
function statementEnd(source: string, from: number): number {
  let depth = 0;
  for (let at = from; at < source.length; at++) {
    const c = source[at];
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === ';' && depth === 0) return at;
  }
  throw new WindowedAccessError(`no ';' ends the assignment at offset ${from}`);
}

/**
 * `source` with every access to a windowed array replaced by an accessor call:
 * - `atomicOp(&NAME[E], ...)` becomes `NAME_atomicOp(E, ...)`;
 * - `NAME[E] = V;` becomes `NAME_store(E, V);`
 * - `NAME[E][C] = V;` (one component of a vector element) becomes `NAME_store_component(E, C, V);`
 * - any other `NAME[E]` (a read) becomes `NAME_load(E)`.
 * Anything else that names the array (a pointer, `arrayLength`) throws WindowedAccessError.
 */
export function rewriteWindowedAccesses(source: string, windows: readonly StorageWindows[]): string {
  if (windows.length === 0) return source;
  const names = windows.map((w) => w.name).join('|');
  const access = new RegExp(`(?<![A-Za-z0-9_])(?:(atomic[A-Za-z]+)\\(\\s*&\\s*)?(${names})\\s*\\[`, 'g');
  let out = '';
  let from = 0;
  for (;;) {
    access.lastIndex = from;
    const m = access.exec(source);
    if (!m) break;
    const [whole, op, name] = m as unknown as [string, string | undefined, string];
    const open = m.index + whole.length - 1;
    const close = closing(source, open);
    const index = rewriteWindowedAccesses(source.slice(open + 1, close), windows);
    if (op === undefined && /&\s*$/.test(source.slice(0, m.index)))
      throw new WindowedAccessError(`a pointer into windowed '${name}' cannot be rewritten: ${context(source, name)}`);
    out += source.slice(from, m.index);
    if (op !== undefined) {
      if (!ATOMIC_OPS.has(op)) throw new WindowedAccessError(`${op}(&${name}[...]) has no windowed accessor`);
      // The call's other arguments and its ')' follow the ']' unchanged.
      out += `${name}_${op}(${index}`;
      from = close + 1;
      continue;
    }
    const component = componentStore(source, close + 1);
    if (component) {
      const inner = rewriteWindowedAccesses(source.slice(component.open + 1, component.close), windows);
      const end = statementEnd(source, component.valueAt);
      const value = rewriteWindowedAccesses(source.slice(component.valueAt, end).trim(), windows);
      out += `${name}_store_component(${index}, ${inner}, ${value})`;
      from = end;
      continue;
    }
    const after = /^\s*=(?!=)/.exec(source.slice(close + 1));
    if (after) {
      const valueAt = close + 1 + after[0].length;
      const end = statementEnd(source, valueAt);
      const value = rewriteWindowedAccesses(source.slice(valueAt, end).trim(), windows);
      out += `${name}_store(${index}, ${value})`;
      from = end;
      continue;
    }
    out += `${name}_load(${index})`;
    from = close + 1;
  }
  out += source.slice(from);
  const left = new RegExp(`(?<![A-Za-z0-9_])(${names})(?![A-Za-z0-9_])`).exec(stripWgslComments(out));
  if (left)
    throw new WindowedAccessError(`'${left[1]}' is windowed, but a use of it is not an element access: ${context(out, left[1] as string)}`);
  return out;
}

/** At `from` (just past an element access), a component index `[C]` followed by `=`: its brackets and where the value starts. */
function componentStore(source: string, from: number): { open: number; close: number; valueAt: number } | undefined {
  const open = /^\s*\[/.exec(source.slice(from));
  if (!open) return undefined;
  const at = from + open[0].length - 1;
  const close = closing(source, at);
  const assign = /^\s*=(?!=)/.exec(source.slice(close + 1));
  return assign ? { open: at, close, valueAt: close + 1 + assign[0].length } : undefined;
}

function context(source: string, name: string): string {
  const at = source.search(new RegExp(`(?<![A-Za-z0-9_])${name}(?![A-Za-z0-9_])`));
  return JSON.stringify(source.slice(Math.max(0, at - 30), at + name.length + 30));
}

/** `atomic<u32>` → `u32`; any other type as it is. */
function atomicInner(element: string): string | undefined {
  const m = /^atomic<\s*([a-z0-9]+)\s*>$/.exec(element.trim());
  return m ? (m[1] as string) : undefined;
}

/**
 * The accessors `rewriteWindowedAccesses` calls, for the operations `source` (already rewritten)
 * uses: each splits the index and switches on the window, the last window in `default`.
 */
export function windowAccessors(source: string, windows: readonly StorageWindows[]): string {
  const out: string[] = [];
  const casStructs = new Set<string>();
  for (const w of windows) {
    if (!Number.isInteger(w.count) || w.count < 2) throw new WindowedAccessError(`${w.name}: windows must be at least 2, got ${w.count}`);
    if (!Number.isInteger(w.elementsLog2) || w.elementsLog2 < 0 || w.elementsLog2 > 31)
      throw new WindowedAccessError(`${w.name}: elementsLog2 must be an integer in [0, 31], got ${w.elementsLog2}`);
    // Each accessor is one switch with an arm per window, and one exit. Every call site inlines
    // all of its arms: on SwiftShader a kernel with many accessed sites compiles slowly (the
    // linear-probe apply kernel over 2 windows takes about a minute), on the GPU's compiler not.
    const arms = (body: (window: string) => string) =>
      windowNames(w.name, w.count)
        .map((window, k) => `    ${k === w.count - 1 ? 'default' : `case ${k}u`}: { ${body(window)} }`)
        .join('\n');
    const split = `let o = e & ${(2 ** w.elementsLog2 - 1) >>> 0}u;`;
    const fn = (signature: string, result: string | undefined, body: (window: string) => string) =>
      [
        `fn ${w.name}_${signature} {`,
        `  ${split}`,
        ...(result ? [`  var r: ${result};`] : []),
        `  switch (e >> ${w.elementsLog2}u) {`,
        arms(body),
        '  }',
        ...(result ? ['  return r;'] : []),
        '}',
      ].join('\n');
    const uses = (accessor: string) => new RegExp(`\\b${w.name}_${accessor}\\(`).test(source);
    const inner = atomicInner(w.element);
    const scalar = /^vec[234]<\s*([a-z0-9]+)\s*>$/.exec(w.element.trim())?.[1];
    if (uses('store_component') && scalar === undefined)
      throw new WindowedAccessError(`${w.name}: a component store needs vector elements, not ${w.element}`);
    if (inner === undefined) {
      if (uses('load')) out.push(fn(`load(e: u32) -> ${w.element}`, w.element, (x) => `r = ${x}[o];`));
      if (uses('store')) out.push(fn(`store(e: u32, v: ${w.element})`, undefined, (x) => `${x}[o] = v;`));
      if (uses('store_component')) out.push(fn(`store_component(e: u32, c: u32, v: ${scalar})`, undefined, (x) => `${x}[o][c] = v;`));
      continue;
    }
    for (const op of ATOMIC_OPS) {
      if (!uses(op)) continue;
      if (op === 'atomicLoad') out.push(fn(`${op}(e: u32) -> ${inner}`, inner, (x) => `r = atomicLoad(&${x}[o]);`));
      else if (op === 'atomicStore') out.push(fn(`${op}(e: u32, v: ${inner})`, undefined, (x) => `atomicStore(&${x}[o], v);`));
      else if (op === 'atomicCompareExchangeWeak') {
        // The builtin's result type cannot be named in WGSL: a struct with the same fields.
        const result = `windowed_cas_${inner}`;
        if (!casStructs.has(inner)) {
          casStructs.add(inner);
          out.push(`struct ${result} { old_value: ${inner}, exchanged: bool }`);
        }
        out.push(
          fn(
            `${op}(e: u32, cmp: ${inner}, v: ${inner}) -> ${result}`,
            result,
            (x) => `let c = atomicCompareExchangeWeak(&${x}[o], cmp, v); r = ${result}(c.old_value, c.exchanged);`,
          ),
        );
      } else out.push(fn(`${op}(e: u32, v: ${inner}) -> ${inner}`, inner, (x) => `r = ${op}(&${x}[o], v);`));
    }
  }
  return out.join('\n\n');
}
