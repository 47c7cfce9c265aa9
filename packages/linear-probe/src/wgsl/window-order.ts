import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { keyLayout } from './key-layouts';
import type { KeyLayout } from './layout';
import { linearProbeParams, WORKGROUP_SIZE } from './params';
import type { SlotWindows } from './windows';

/**
 * Window order for batches over tables of more than two windows. On an H100 (Dawn/Vulkan), random
 * reads spread over more than 2 GiB run 5 to 7.5 times slower than over 1 GiB, yet at 95% of the
 * 1 GiB rate when the reads in flight at one time fall in one window of 1 GiB
 * (tools/gpu-check's perf-span). So a batch is taken window by window:
 *   1. count: each workgroup tallies, per window, the keys of its chunk of the batch whose home
 *      slot lies in that window;
 *   2. scan the tallies, window-major, into each (window, chunk) run's offset in `order`;
 *   3. scatter: each key's batch index into its run.
 * `order` then lists the batch window by window, and within a window by chunk, so the kernels that
 * walk it (the find kernel's `ordered` variant) read one window at a time. A probe that runs past
 * its window's end reads on into the next one as before.
 *   4. gather: the ordered kernel writes each answer at its list position, and this pass moves
 *      it to its key's batch index through `positions` (the scatter's inverse of `order`).
 * Answers written straight to batch indices had each 32-byte sector written by several windows'
 * phases, which took about a quarter of a find over 2^29 slots; a chunk's answers lie in one run
 * per window, so the gather reads a few sequential streams (apps/bench/results'
 * 2026-11-27-h100-window-order.md).
 * The helpers at the end give a kernel its `ordered` variant.
 */

/** Workgroups of the count and scatter passes: each takes one contiguous chunk of the batch. */
export const ORDER_WORKGROUPS = 4096;
/** Keys a chunk holds at least (4 rounds of a workgroup), so small batches take few workgroups too. */
export const ORDER_CHUNK_MIN = 1024;

type OrderVariant = { layout: KeyLayout['name'] } & SlotWindows;

const variant: OrderVariant = { layout: 'u32', windows: 2, windowSlotsLog2: 6 };

/** The chunk loop both passes share: workgroup `g` of G takes keys [g * per, (g + 1) * per). */
const chunkOfWorkgroup = /* wgsl */ `
  let chunks = grid_threads(nwg, ${WORKGROUP_SIZE}u) / ${WORKGROUP_SIZE}u;
  let chunk = grid_workgroup(wid, nwg);
  let per = (params.n + chunks - 1u) / chunks;
  let start = chunk * per;
  let end = min(params.n, start + per);`;

const orderSource = (body: string, v: OrderVariant, decls: string) => {
  const L = keyLayout(v.layout);
  return composeWgsl(
    /* wgsl */ `
${decls}
const WINDOWS = ${v.windows >>> 0}u;
var<workgroup> wg_tally: array<atomic<u32>, ${v.windows >>> 0}>;
fn window_of(i: u32) -> u32 {
  let key = ${L.readKey('i')};
  return lp_home(key) >> ${v.windowSlotsLog2 >>> 0}u;
}
${entryPoint(WORKGROUP_SIZE)} {
${chunkOfWorkgroup}
  // Zeroed here, not left to the implicit initialization: without a barrier of its own, the
  // scatter's ranks repeated on SwiftShader.
  if (lid < WINDOWS) { atomicStore(&wg_tally[lid], 0u); }
  workgroupBarrier();
${body}
}`,
    { modules: [gridModule, L.common] },
  );
};

/** Per window, the keys of each workgroup's chunk: `tallies[w * G + g]` (params.n = batch). */
export const windowCountKernel = defineKernel({
  name: 'linear-probe.window-order.count',
  workgroupSize: WORKGROUP_SIZE,
  variant,
  params: linearProbeParams,
  bindings: { params: uniform(), keys: storage('read', 'u32'), tallies: storage('read_write', 'u32') },
  source: (decls, v) =>
    orderSource(
      /* wgsl */ `
  for (var i = start + lid; i < end; i += ${WORKGROUP_SIZE}u) { atomicAdd(&wg_tally[window_of(i)], 1u); }
  workgroupBarrier();
  if (lid < WINDOWS) { tallies[lid * chunks + chunk] = atomicLoad(&wg_tally[lid]); }`,
      v,
      decls,
    ),
});

/**
 * Each key's batch index into its (window, chunk) run of `order`, and that position into
 * `positions` at the key's index; `offsets` are the scanned tallies.
 */
export const windowScatterKernel = defineKernel({
  name: 'linear-probe.window-order.scatter',
  workgroupSize: WORKGROUP_SIZE,
  variant,
  params: linearProbeParams,
  bindings: {
    params: uniform(),
    keys: storage('read', 'u32'),
    offsets: storage('read', 'u32'),
    order: storage('read_write', 'u32'),
    positions: storage('read_write', 'u32'),
  },
  source: (decls, v) =>
    orderSource(
      /* wgsl */ `
  for (var i = start + lid; i < end; i += ${WORKGROUP_SIZE}u) {
    let w = window_of(i);
    let at = offsets[w * chunks + chunk] + atomicAdd(&wg_tally[w], 1u);
    order[at] = i;
    positions[i] = at;
  }`,
      v,
      decls,
    ),
});

/** Each key's answer, moved from its list position (where an ordered kernel wrote it) to its batch index. */
export const windowGatherKernel = defineKernel({
  name: 'linear-probe.window-order.gather',
  workgroupSize: WORKGROUP_SIZE,
  params: linearProbeParams,
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
${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let at = positions[i];
    out_values[i] = listed_values[at];
    out_found[i] = listed_found[at];
  }
}`,
      { modules: [gridModule] },
    ),
});

/** The `order` binding of a kernel's ordered variant. */
export function orderBinding(ordered: boolean): { order: ReturnType<typeof storage> } | Record<never, never> {
  return ordered ? { order: storage('read', 'u32') } : {};
}

/**
 * A grid-stride loop over the batch that opens its body with `i`, the batch index (walked in
 * `order` when ordered), and `at`, where its answer goes: the list position when ordered (for
 * windowGatherKernel), else `i`.
 */
export function batchGridLoop(ordered: boolean): string {
  return ordered
    ? `${gridStrideLoop('at', 'params.n', WORKGROUP_SIZE)} {\n    let i = order[at];`
    : `${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {\n    let at = i;`;
}

/**
 * A chunk loop's item `base + lid` as `i`, a batch index (through `order` when ordered; past the
 * batch, itself), and `at`, where its answer goes (as in batchGridLoop).
 */
export function chunkItem(ordered: boolean): string {
  return ordered
    ? 'let at = base + lid;\n    let i = select(at, order[min(at, params.n - 1u)], at < params.n);'
    : 'let i = base + lid;\n    let at = i;';
}
