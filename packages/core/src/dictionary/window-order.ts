import { composeWgsl, entryPoint, gridModule, gridStrideLoop, type WgslModule } from '@gpuhash/kernels';
import { type BindingsLayout, storage, uniform } from '../binding-layout';
import { defineKernel } from '../define-kernel';
import type { Gpu } from '../gpu';
import { encodeExclusiveScan } from '../scan';
import { timestampEnds } from '../timing';
import type { ParamsLayout } from '../uniform-params';
import type { ScratchArena } from './scratch';

/**
 * Window order, for finds over tables of more than two windows of storage (linear-probe, Hive).
 * On an H100 (Dawn/Vulkan), random reads spread over more than 2 GiB run 5 to 7.5 times slower
 * than over 1 GiB, yet at 95% of the 1 GiB rate when the reads in flight at one time fall in one
 * window of 1 GiB (tools/gpu-check's perf-span). So a batch is taken window by window:
 *   1. count: each workgroup tallies, per window, the entries of its chunk of the batch whose
 *      first read lies in that window (the table's `window_of`);
 *   2. scan the tallies, window-major, into each (window, chunk) run's offset in `order`;
 *   3. scatter: each entry's batch index into its run, and that position into `positions`;
 *   4. the table's ordered kernel walks `order` (one window at a time), writing each answer at
 *      its list position; gather moves the answers to their batch indices through `positions`.
 * Answers written straight to batch indices had each 32-byte sector written by several windows'
 * phases, which took about a quarter of a linear-probe find over 2^29 slots; a chunk's answers
 * lie in one run per window, so the gather reads a few sequential streams
 * (apps/bench/results' 2026-11-27-h100-window-order.md).
 */

/** Tables of more bytes than this take finds in window order. */
export const WINDOW_ORDER_FROM_BYTES = 2 ** 31;
/** Smaller batches keep batch order: the order's passes would cost more than they save. */
export const WINDOW_ORDER_MIN_BATCH = 2 ** 16;
/** Workgroups of the count and scatter passes: each takes one contiguous chunk of the batch. */
export const ORDER_WORKGROUPS = 4096;
/** Entries a chunk holds at least (4 rounds of a workgroup), so small batches take few workgroups too. */
export const ORDER_CHUNK_MIN = 1024;
const WG = 256;

/** Whether a find of `n` entries over `tableBytes` of slots takes window order ('auto'), or as forced (tests). */
export function ordersByWindow(mode: 'auto' | 'always' | 'never', windows: number, n: number, tableBytes: number): boolean {
  if (windows === 1 || mode === 'never' || n === 0) return false;
  return mode === 'always' || (n >= WINDOW_ORDER_MIN_BATCH && tableBytes > WINDOW_ORDER_FROM_BYTES);
}

/** A table's `fn window_of(i: u32) -> u32` (the window of batch entry i's first read) and the modules it needs. */
export interface WindowOf {
  readonly code: string;
  readonly modules: readonly WgslModule[];
}

/** The chunk loop both passes share: workgroup `g` of G takes entries [g * per, (g + 1) * per). */
const chunkOfWorkgroup = /* wgsl */ `
  let chunks = grid_threads(nwg, ${WG}u) / ${WG}u;
  let chunk = grid_workgroup(wid, nwg);
  let per = (params.n + chunks - 1u) / chunks;
  let start = chunk * per;
  let end = min(params.n, start + per);`;

function orderSource(decls: string, windows: number, of: WindowOf, body: string): string {
  return composeWgsl(
    /* wgsl */ `
${decls}
const WINDOWS = ${windows >>> 0}u;
var<workgroup> wg_tally: array<atomic<u32>, ${windows >>> 0}>;
${of.code}
${entryPoint(WG)} {
${chunkOfWorkgroup}
  // Zeroed here, not left to the implicit initialization: without a barrier of its own, the
  // scatter's ranks repeated on SwiftShader.
  if (lid < WINDOWS) { atomicStore(&wg_tally[lid], 0u); }
  workgroupBarrier();
${body}
}`,
    { modules: [gridModule, ...of.modules] },
  );
}

/** What the count and scatter passes bind for `window_of` by default: the batch's keys, as u32 words. */
const KEYS_INPUT = { keys: storage('read', 'u32') } as const;

/**
 * A table's three order kernels. `params` is the table's uniform (its `n` is the batch), `variant`
 * its variant defaults (with `windows`), `windowOf` its window function per variant, `inputs` the
 * bindings that function reads (default: `keys`, u32 words), which the count and scatter passes
 * bind before their own.
 */
export function windowOrderKernels<
  const P extends ParamsLayout & { n: 'u32' },
  V extends { windows: number },
  const I extends BindingsLayout = typeof KEYS_INPUT,
>(table: string, params: P, variant: V, windowOf: (v: V) => WindowOf, inputs: I = KEYS_INPUT as unknown as I) {
  const count = defineKernel({
    name: `${table}.window-order.count`,
    workgroupSize: WG,
    variant,
    params,
    bindings: { params: uniform(), ...inputs, tallies: storage('read_write', 'u32') },
    source: (decls, v) =>
      orderSource(
        decls,
        v.windows,
        windowOf(v),
        /* wgsl */ `
  for (var i = start + lid; i < end; i += ${WG}u) { atomicAdd(&wg_tally[window_of(i)], 1u); }
  workgroupBarrier();
  if (lid < WINDOWS) { tallies[lid * chunks + chunk] = atomicLoad(&wg_tally[lid]); }`,
      ),
  });
  const scatter = defineKernel({
    name: `${table}.window-order.scatter`,
    workgroupSize: WG,
    variant,
    params,
    bindings: {
      params: uniform(),
      ...inputs,
      offsets: storage('read', 'u32'),
      order: storage('read_write', 'u32'),
      positions: storage('read_write', 'u32'),
    },
    source: (decls, v) =>
      orderSource(
        decls,
        v.windows,
        windowOf(v),
        /* wgsl */ `
  for (var i = start + lid; i < end; i += ${WG}u) {
    let w = window_of(i);
    let at = offsets[w * chunks + chunk] + atomicAdd(&wg_tally[w], 1u);
    order[at] = i;
    positions[i] = at;
  }`,
      ),
  });
  /** Each entry's answer (value, found) moved from its list position to its batch index. */
  const gather = defineKernel({
    name: `${table}.window-order.gather`,
    workgroupSize: WG,
    params,
    bindings: {
      params: uniform(),
      positions: storage('read', 'u32'),
      listed_values: storage('read', 'u32'),
      listed_found: storage('read', 'u32'),
      out_values: storage('read_write', 'u32'),
      out_found: storage('read_write', 'u32'),
    },
    source: (decls) =>
      composeWgsl(
        /* wgsl */ `
${decls}
${entryPoint(WG)} {
  ${gridStrideLoop('i', 'params.n', WG)} {
    let at = positions[i];
    out_values[i] = listed_values[at];
    out_found[i] = listed_found[at];
  }
}`,
        { modules: [gridModule] },
      ),
  });
  return { count, scatter, gather };
}

/** One order pass for the engine to dispatch (its count or scatter variant, the inputs added): its own buffers. */
export type OrderPass =
  | { readonly pass: 'count'; readonly buffers: { readonly tallies: GPUBuffer } }
  | {
      readonly pass: 'scatter';
      readonly buffers: { readonly offsets: GPUBuffer; readonly order: GPUBuffer; readonly positions: GPUBuffer };
    };

/** How a table's engine dispatches an order pass, with the grid and timing options given. */
export type OrderDispatch = (
  pass: OrderPass,
  options: { invocations: number; maxWorkgroups: number; timestampWrites?: GPUComputePassTimestampWrites },
) => void;

/**
 * The batch's indices window by window (`order`) and each index's place there (`positions`), in
 * scratch buffers: the count and scatter passes, the scan between them.
 */
export function encodeWindowOrder(
  gpu: Gpu,
  encoder: GPUCommandEncoder,
  n: number,
  windows: number,
  scratch: ScratchArena,
  dispatch: OrderDispatch,
  timestampWrites?: GPUComputePassTimestampWrites,
): { order: GPUBuffer; positions: GPUBuffer } {
  const chunks = Math.min(ORDER_WORKGROUPS, Math.ceil(n / ORDER_CHUNK_MIN));
  const runs = windows * chunks;
  const tallies = scratch.get('order.tallies', runs * 4);
  const offsets = scratch.get('order.offsets', runs * 4);
  const order = scratch.get('order', n * 4);
  const positions = scratch.get('order.positions', n * 4);
  const grid = { invocations: chunks * WG, maxWorkgroups: chunks };
  dispatch({ pass: 'count', buffers: { tallies } }, { ...grid, timestampWrites });
  encodeExclusiveScan(gpu, encoder, tallies, offsets, runs);
  dispatch({ pass: 'scatter', buffers: { offsets, order, positions } }, grid);
  return { order, positions };
}

/** The buffers of windowOrderKernels' gather, by binding name. */
export interface OrderGatherBuffers {
  readonly positions: GPUBuffer;
  readonly listed_values: GPUBuffer;
  readonly listed_found: GPUBuffer;
  readonly out_values: GPUBuffer;
  readonly out_found: GPUBuffer;
}

/** How a table's engine dispatches the passes of a find in window order. */
export interface OrderedFindDispatch {
  /** The order's count and scatter passes. */
  readonly order: OrderDispatch;
  /** The table's ordered find: walking `order`, each answer into `listed` at its list position. */
  find(listed: { readonly out_values: GPUBuffer; readonly out_found: GPUBuffer }, order: GPUBuffer): void;
  /** The gather, with the timing span's end. */
  gather(buffers: OrderGatherBuffers, timestampWrites?: GPUComputePassTimestampWrites): void;
}

/**
 * A find of `n` keys in window order, answers to `out`: the order's passes, the table's ordered
 * find into scratch, and the gather back to batch order. With timestamp writes, the first order
 * pass writes the beginning and the gather the end.
 */
export function encodeOrderedFind(
  gpu: Gpu,
  encoder: GPUCommandEncoder,
  n: number,
  windows: number,
  scratch: ScratchArena,
  out: { readonly values: GPUBuffer; readonly found: GPUBuffer },
  dispatch: OrderedFindDispatch,
  timestampWrites?: GPUComputePassTimestampWrites,
): void {
  const { first, last } = timestampEnds(timestampWrites);
  const { order, positions } = encodeWindowOrder(gpu, encoder, n, windows, scratch, dispatch.order, first);
  const listed = { out_values: scratch.get('order.values', n * 4), out_found: scratch.get('order.found', n * 4) };
  dispatch.find(listed, order);
  dispatch.gather(
    { positions, listed_values: listed.out_values, listed_found: listed.out_found, out_values: out.values, out_found: out.found },
    last,
  );
}

/** The `order` binding of a kernel's ordered variant. */
export function orderBinding(ordered: boolean): { order: ReturnType<typeof storage> } | Record<never, never> {
  return ordered ? { order: storage('read', 'u32') } : {};
}

/**
 * A grid-stride loop over the batch that opens its body with `i`, the batch index (walked in
 * `order` when ordered), and `answer_at`, where its answer goes: the list position when ordered
 * (for the gather kernel), else `i`.
 */
export function batchGridLoop(ordered: boolean, workgroupSize: number): string {
  return ordered
    ? `${gridStrideLoop('answer_at', 'params.n', workgroupSize)} {\n    let i = order[answer_at];`
    : `${gridStrideLoop('i', 'params.n', workgroupSize)} {\n    let answer_at = i;`;
}

/**
 * A chunk loop's item `base + lid` as `name`, a batch entry (through `order` when ordered; past
 * the batch, itself), and `answer_at`, where its answer goes (as in batchGridLoop).
 */
export function chunkItem(ordered: boolean, name = 'i'): string {
  return ordered
    ? `let answer_at = base + lid;\n    let ${name} = select(answer_at, order[min(answer_at, params.n - 1u)], answer_at < params.n);`
    : `let ${name} = base + lid;\n    let answer_at = ${name};`;
}
