import { windowOrderKernels } from '@gpuhash/core';
import { commonModule } from './common';
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
