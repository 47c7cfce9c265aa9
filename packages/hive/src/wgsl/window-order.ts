import { defineKernel, storage, uniform, windowOrderKernels } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';
import { hiveParams } from './params';
import { ONE_WINDOW } from './windows';

/**
 * Finds over tables of more than two windows of slots take their batch window by window
 * (@gpuhash/core's window order): a key's window is that of its first bucket, where its home
 * sector and most keys are. Reads of a second bucket or the stash go wherever they lie.
 */
export const {
  count: windowCountKernel,
  scatter: windowScatterKernel,
  gather: windowGatherKernel,
} = windowOrderKernels('hive', hiveParams, { ...ONE_WINDOW, windows: 2 }, (v) => ({
  code: `fn window_of(i: u32) -> u32 {
  let key = keys[i];
  // Reserved keys are never found: any window will do.
  if (key >= TOMBSTONE) { return 0u; }
  return hv_b1(key) >> ${v.windowBucketsLog2 >>> 0}u;
}`,
  modules: [commonModule],
}));

/** The variant of the spill's order: `windows` runs (slot windows squared, and one for the entries past the spill's count). */
export interface SpillOrderVariant {
  windows: number;
  slotWindows: number;
  windowBucketsLog2: number;
}

/**
 * A bulk build's spilled keys window by window, for the op passes that place them (tables of more
 * than 2 GiB of slots, at high load): a spilled key's first bucket is full, so its work lies in
 * both of its buckets, and its run is the pair of their windows. Entry j of the spill (`spill[1 +
 * j]`, a batch index into `keys`) is listed; entries past the spill's count (its first word) go to
 * the last run, after every real one. Reserved keys (spilled too) take run 0.
 */
export const { count: spillCountKernel, scatter: spillScatterKernel } = windowOrderKernels(
  'hive.spill',
  hiveParams,
  { windows: 5, slotWindows: 2, windowBucketsLog2: 0 } as SpillOrderVariant,
  (v) => ({
    code: `fn window_of(j: u32) -> u32 {
  if (j >= spill[0]) { return WINDOWS - 1u; }
  let key = keys[spill[1u + j]];
  if (key >= TOMBSTONE) { return 0u; }
  return (hv_b1(key) >> ${v.windowBucketsLog2 >>> 0}u) * ${v.slotWindows >>> 0}u + (hv_b2(key) >> ${v.windowBucketsLog2 >>> 0}u);
}`,
    modules: [commonModule],
  }),
  { keys: storage('read', 'u32'), spill: storage('read', 'u32') },
);

/** The spill in its order, as a spill list again (its count, then batch indices): entry `at` is spill entry order[at]. */
export const orderedSpillKernel = defineKernel({
  name: 'hive.spill.ordered',
  workgroupSize: WORKGROUP_SIZE,
  params: hiveParams,
  bindings: { params: uniform(), spill: storage('read', 'u32'), order: storage('read', 'u32'), ordered: storage('read_write', 'u32') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE)} {
  let count = spill[0];
  ${gridStrideLoop('at', 'min(count, params.n)', WORKGROUP_SIZE)} {
    ordered[1u + at] = spill[1u + order[at]];
  }
  if (grid_workgroup(wid, nwg) == 0u && lid == 0u) { ordered[0] = count; }
}`,
      { modules: [gridModule] },
    ),
});
