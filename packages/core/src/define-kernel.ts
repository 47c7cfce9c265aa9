import { stripWgslComments } from '@gpuhash/kernels';
import {
  type BindingRecord,
  type BindingsLayout,
  bindingDeclarations,
  checkBindingsLayout,
  declaredBindingNames,
  orderBindings,
  type StorageNames,
  type UniformNames,
} from './binding-layout';
import { InvalidArgumentError } from './errors';
import type { Gpu } from './gpu';
import type { Binding, Kernel } from './kernel';
import { type ParamsLayout, type ParamValues, packUniform, paramsStruct, type UniformLayout, uniformLayout } from './uniform-params';
import { type Variant, variantKey } from './variant-key';

/**
 * Kernels declared once: one description gives the WGSL declarations of the bindings and the
 * `Params` struct, the uniform packing, the bind-group entries by name, the dispatch, and one
 * memoised `Kernel` per variant with a cache key derived from the variant (never written by hand).
 */
/**
 * `V` is constrained to `object`, not `Variant`, so a default like `{ assign: false }` infers
 * `boolean` rather than the literal `false`; variantKey checks the fields at run time.
 */
export interface KernelSpec<B extends BindingsLayout, P extends ParamsLayout, V extends object> {
  /** Stable, dotted name: 'core.fill', 'linear-probe.insert'. */
  readonly name: string;
  /** Invocations per workgroup; must equal the shader's @workgroup_size. */
  readonly workgroupSize: number | ((variant: V) => number);
  /** Fields of the params uniform, in order (u32, i32 or f32; optionally with a default). */
  readonly params?: P;
  /** Name of the params struct in WGSL. Default 'Params'. */
  readonly paramsStruct?: string;
  /** Bindings by name, in binding order: `uniform()` for the params, `storage(access, element)` for arrays. */
  readonly bindings: B | ((variant: V) => B);
  /** The defaults of every variant field (constants, flags); `variant(overrides)` replaces some. */
  readonly variant?: V;
  /**
   * The complete WGSL (usually through composeWgsl). `decls` is the `struct Params` and binding
   * declarations, in declaration order; the source must contain it as given.
   */
  readonly source: (decls: string, variant: Readonly<V>, workgroupSize: number) => string;
  readonly entryPoint?: string;
}

/** What one dispatch of a defined kernel needs. */
export type EncodeOptions<B extends BindingsLayout, P extends ParamsLayout> = {
  /** A buffer (or range) for every storage binding, by name. */
  readonly buffers: { readonly [K in StorageNames<B>]: Binding | readonly Binding[] };
  /** Invocations wanted (folded into a legal grid). Ignored, and optional, with `indirect`. */
  readonly invocations?: number;
  /** Cap on workgroups launched (grid-stride kernels loop over the rest). */
  readonly maxWorkgroups?: number;
  /** The grid read from a buffer when the pass runs (see DispatchOptions.indirect). */
  readonly indirect?: { buffer: GPUBuffer; offset: number };
  readonly timestampWrites?: GPUComputePassTimestampWrites;
  /** Label of the pass. Default: the kernel's name. */
  readonly label?: string;
} & ([UniformNames<B>] extends [never] ? { readonly params?: undefined } : { readonly params: ParamValues<P> });

/** One compiled variant: a `Kernel` (for PipelineCache and encodeDispatch) with its host half. */
export interface DefinedKernel<B extends BindingsLayout, P extends ParamsLayout> extends Kernel {
  readonly cacheKey: string;
  /** The generated declarations this variant's source contains. */
  readonly declarations: string;
  /** Offsets of the params fields and the uniform's padded size. */
  readonly uniform: UniformLayout;
  /** Binding names, in binding order. */
  readonly bindingNames: readonly (keyof B & string)[];
  /** The params uniform's words. Throws InvalidArgumentError on a missing, unknown or out-of-range field. */
  packParams(values: ParamValues<P>): Uint32Array;
  /** Bind-group entries, in binding order, from buffers by name. Throws InvalidArgumentError on a missing or unknown name. */
  bindings(record: BindingRecord<B>): Binding[];
  /** Encodes one pass: packs the params into a pooled uniform, binds by name, dispatches, releases the uniform. */
  encode(gpu: Gpu, encoder: GPUCommandEncoder, options: EncodeOptions<B, P>): void;
}

/** A kernel and its variants, each built once. */
export interface KernelFamily<B extends BindingsLayout, P extends ParamsLayout, V extends object> {
  readonly name: string;
  /** The variant with these fields replaced (the same object for the same fields, in any order). */
  variant(overrides?: Partial<V>): DefinedKernel<B, P>;
  /** Variants built so far. */
  readonly built: number;
}

/**
 * Declares a family of kernels from one spec: named bindings, a params uniform and the variant
 * object that specialises the WGSL. Each variant is checked, compiled once per device, and cached.
 * The family binds buffers by name and writes params by field, so no binding index or uniform
 * offset is written by hand.
 */
export function defineKernel<const B extends BindingsLayout, const P extends ParamsLayout = {}, V extends object = {}>(
  spec: KernelSpec<B, P, V>,
): KernelFamily<B, P, V> {
  const where = `defineKernel('${spec.name}')`;
  if (typeof spec.name !== 'string' || spec.name.length === 0) throw new InvalidArgumentError('defineKernel: give the kernel a name');
  const defaults = (spec.variant ?? {}) as V;
  variantKey(defaults as Variant, where);
  const uniform = uniformLayout(spec.params ?? {}, where);
  const built = new Map<string, DefinedKernel<B, P>>();

  const merge = (overrides: Partial<V>): V => {
    const unknown = Object.keys(overrides).filter((k) => !Object.hasOwn(defaults, k));
    if (unknown.length > 0) {
      throw new InvalidArgumentError(
        `${where}: unknown variant field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'${k}'`).join(', ')} (declared: ${Object.keys(defaults).join(', ') || 'none'})`,
      );
    }
    const merged: Record<string, unknown> = { ...(defaults as Record<string, unknown>) };
    for (const [k, v] of Object.entries(overrides)) if (v !== undefined) merged[k] = v;
    return merged as V;
  };

  return {
    name: spec.name,
    get built() {
      return built.size;
    },
    variant(overrides: Partial<V> = {}) {
      const variant = merge(overrides);
      const key = variantKey(variant as Variant, where);
      let kernel = built.get(key);
      if (!kernel) {
        kernel = buildVariant(spec, variant, key, uniform, `${where}${key ? `[${key}]` : ''}`);
        built.set(key, kernel);
      }
      return kernel;
    },
  };
}

function buildVariant<B extends BindingsLayout, P extends ParamsLayout, V extends object>(
  spec: KernelSpec<B, P, V>,
  variant: V,
  cacheKey: string,
  uniform: UniformLayout,
  where: string,
): DefinedKernel<B, P> {
  const layout = typeof spec.bindings === 'function' ? spec.bindings(variant) : spec.bindings;
  const uniformName = checkBindingsLayout(layout, uniform.fields.length > 0, where);
  const workgroupSize = typeof spec.workgroupSize === 'function' ? spec.workgroupSize(variant) : spec.workgroupSize;
  if (!Number.isInteger(workgroupSize) || workgroupSize < 1 || workgroupSize > 1024)
    throw new InvalidArgumentError(`${where}: workgroupSize must be an integer in [1, 1024], got ${workgroupSize}`);
  const structName = spec.paramsStruct ?? 'Params';
  const lines = bindingDeclarations(layout, structName);
  const declarations = (uniformName !== undefined ? [paramsStruct(structName, uniform), ...lines] : lines).join('\n');
  const source = spec.source(declarations, variant, workgroupSize);
  checkSourceUsesLayout(
    source,
    declarations,
    Object.entries(layout).flatMap(([name, spec]) => declaredBindingNames(name, spec)),
    where,
  );
  const bindingNames = Object.keys(layout) as (keyof B & string)[];

  const packParams = (values: ParamValues<P>) => packUniform(uniform, values as Record<string, number | undefined>, where);
  const bindings = (record: BindingRecord<B>) => orderBindings(layout, record, where);

  return {
    name: spec.name,
    cacheKey,
    source,
    workgroupSize,
    entryPoint: spec.entryPoint,
    declarations,
    uniform,
    bindingNames,
    packParams,
    bindings,
    encode(gpu, encoder, options) {
      const record: Record<string, Binding | readonly Binding[]> = { ...(options.buffers as Record<string, Binding>) };
      if (uniformName !== undefined && Object.hasOwn(record, uniformName))
        throw new InvalidArgumentError(`${where}: '${uniformName}' is the params uniform; pass its fields as params, not a buffer`);
      const words = uniformName !== undefined ? packParams(options.params as ParamValues<P>) : undefined;
      if (uniformName === undefined && options.params !== undefined)
        throw new InvalidArgumentError(`${where}: this kernel has no params uniform, but params were given`);
      const invocations = options.invocations ?? (options.indirect ? 0 : undefined);
      if (invocations === undefined) throw new InvalidArgumentError(`${where}: give invocations (or an indirect grid)`);
      const params = words ? gpu.uniforms(words) : undefined;
      try {
        if (params && uniformName !== undefined) record[uniformName] = params;
        gpu.encodeDispatch(
          encoder,
          this,
          {
            bindings: bindings(record as BindingRecord<B>),
            invocations,
            maxWorkgroups: options.maxWorkgroups,
            indirect: options.indirect,
            label: options.label,
          },
          options.timestampWrites,
        );
      } finally {
        // Pooled: reused only after the submit that carries this pass.
        if (params) gpu.pool.release(params);
      }
    },
  };
}

/**
 * The source must contain the declarations as given, and use every binding besides declaring it:
 * pipelines use 'auto' layouts, which drop unused bindings, and a bind group naming one fails.
 */
function checkSourceUsesLayout(source: string, declarations: string, names: readonly string[], where: string): void {
  const at = source.indexOf(declarations);
  if (at < 0) throw new InvalidArgumentError(`${where}: the source must include the declarations it was given (\${decls})`);
  const rest = stripWgslComments(source.slice(0, at) + source.slice(at + declarations.length));
  const unused = names.filter((n) => !new RegExp(`\\b${n}\\b`).test(rest));
  if (unused.length > 0) {
    throw new InvalidArgumentError(
      `${where}: binding${unused.length > 1 ? 's' : ''} ${unused.map((n) => `'${n}'`).join(', ')} declared but never used; ` +
        "'auto' pipeline layouts drop unused bindings, so remove it from the layout or use it",
    );
  }
}
