import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';
import { hiveParams } from './params';
import { ONE_WINDOW, type SlotWindows, slotsBinding, slotWindows } from './windows';

/**
 * Frees the slots a batch retired (erased in pass A, or abandoned claims): key back to
 * EMPTY, then the free bit. A dispatch of its own, after every op that could still read them, so
 * no slot is reused while a find may be reading it (that would be ABA: a find reading key K1, then
 * the value of a K2 that took the slot).
 */
export const releaseKernel = defineKernel({
  name: 'hive.release',
  workgroupSize: WORKGROUP_SIZE,
  variant: ONE_WINDOW,
  params: hiveParams,
  bindings: (v: SlotWindows) => ({
    params: uniform(),
    slots: slotsBinding('read_write', 'atomic<u32>', v),
    masks: storage('read_write', 'atomic<u32>'),
    lists: storage('read_write', 'atomic<u32>'),
  }),
  source: (decls, w) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE)} {
  let count = min(atomicLoad(&lists[L_FREED]), params.list_cap);
  ${gridStrideLoop('j', 'count', WORKGROUP_SIZE)} {
    let g = atomicLoad(&lists[LIST_HEADER + L_FREED * params.list_cap + j]);
    atomicStore(&slots[hv_kw(g)], EMPTY);
    atomicOr(&masks[g / 32u], 1u << (g % 32u));
  }
}
`,
      { modules: [gridModule, commonModule], windows: slotWindows(w, { slots: 'atomic<u32>' }) },
    ),
});
