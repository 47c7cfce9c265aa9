import { windowOrderKernels } from '@gpuhash/core';
import { keyLayout } from './key-layouts';
import type { KeyLayout } from './layout';
import { linearProbeParams } from './params';
import type { SlotWindows } from './windows';

/**
 * Finds over tables of more than two windows take their batch window by window (@gpuhash/core's
 * window order): a key's window is that of its home slot, where its probe starts. A probe that
 * runs past its window's end reads on into the next one as before.
 */
export const {
  count: windowCountKernel,
  scatter: windowScatterKernel,
  gather: windowGatherKernel,
} = windowOrderKernels(
  'linear-probe',
  linearProbeParams,
  { layout: 'u32', windows: 2, windowSlotsLog2: 6 } as { layout: KeyLayout['name'] } & SlotWindows,
  (v) => {
    const L = keyLayout(v.layout);
    return {
      code: `fn window_of(i: u32) -> u32 {
  let key = ${L.readKey('i')};
  return lp_home(key) >> ${v.windowSlotsLog2 >>> 0}u;
}`,
      modules: [L.common],
    };
  },
);
