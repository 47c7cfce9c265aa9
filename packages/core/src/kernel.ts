/**
 * A kernel is a small declarative object: a name, a cache key for its specialisation, its WGSL
 * and its workgroup size. Sizes travel in uniforms, so one pipeline serves every batch size.
 * Bindings are group 0, in order: `bindings[i]` is `@binding(i)`.
 */
export interface Kernel {
  /** Stable, dotted name: 'kernels.scan.reduce', 'linear-probe.insert'. */
  readonly name: string;
  /** What distinguishes this specialisation (constants, features); empty when there is one. */
  readonly cacheKey?: string;
  /** Complete WGSL source. */
  readonly source: string;
  readonly entryPoint?: string;
  /** Must equal the shader's @workgroup_size (x only). */
  readonly workgroupSize: number;
}

/** A buffer bound to a kernel: the whole buffer, or a range of it (offset and size in bytes). */
export type Binding = GPUBuffer | { buffer: GPUBuffer; offset?: number; size?: number };

/**
 * u32 words [start, start + count) of a binding (a buffer, or a range of one) as a binding of their
 * own: a part of a batch. The byte offset must meet minStorageBufferOffsetAlignment.
 */
export function wordRange(b: Binding, start: number, count: number): Binding {
  const [buffer, offset] = 'buffer' in b ? [b.buffer, b.offset ?? 0] : [b, 0];
  return { buffer, offset: offset + start * 4, size: count * 4 };
}

/** One dispatch of a kernel: its bindings (in binding order), how many invocations (or an indirect grid), and a label. */
export interface DispatchOptions {
  bindings: readonly Binding[];
  /** Invocations wanted; the grid is folded into two dimensions and kernels grid-stride over the rest. */
  invocations: number;
  /** Cap on workgroups launched (grid-stride kernels may run fewer, larger loops). */
  maxWorkgroups?: number;
  /** Label of the pass, for timing and error messages. */
  label?: string;
  /**
   * The grid read from a buffer when the pass runs (three u32 workgroup counts at byte `offset`,
   * a multiple of 4; the buffer needs INDIRECT usage): for work whose size only the device knows.
   * `invocations` and `maxWorkgroups` are then ignored. A count of 0 runs nothing.
   */
  indirect?: { buffer: GPUBuffer; offset: number };
}
