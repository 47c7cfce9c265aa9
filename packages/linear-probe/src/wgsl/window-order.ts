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
 * its window's end reads on into the next one as before. The answers still land at their keys'
 * indices, each 32-byte sector of them written by several windows' phases: in finds over 2^29
 * slots those writes took about a quarter of the time (apps/bench/results'
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

/** Each key's batch index into its (window, chunk) run of `order`; `offsets` are the scanned tallies. */
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
  },
  source: (decls, v) =>
    orderSource(
      /* wgsl */ `
  for (var i = start + lid; i < end; i += ${WORKGROUP_SIZE}u) {
    let w = window_of(i);
    let rank = atomicAdd(&wg_tally[w], 1u);
    order[offsets[w * chunks + chunk] + rank] = i;
  }`,
      v,
      decls,
    ),
});

/** The `order` binding of a kernel's ordered variant. */
export function orderBinding(ordered: boolean): { order: ReturnType<typeof storage> } | Record<never, never> {
  return ordered ? { order: storage('read', 'u32') } : {};
}

/** A grid-stride loop over the batch that opens its body with `i`, the batch index (walked in `order` when ordered). */
export function batchGridLoop(ordered: boolean): string {
  return ordered
    ? `${gridStrideLoop('j', 'params.n', WORKGROUP_SIZE)} {\n    let i = order[j];`
    : `${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {`;
}

/** A chunk loop's item `base + lid` as a batch index (through `order` when ordered; past the batch, itself). */
export function chunkItem(ordered: boolean): string {
  return ordered ? 'select(base + lid, order[min(base + lid, params.n - 1u)], base + lid < params.n)' : 'base + lid';
}
