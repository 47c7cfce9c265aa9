import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { commonModule } from './common';
import { cachedKernel, entryPoint, gridLoop } from './kernel-cache';

/**
 * Frees the slots a batch retired (erased in a mixed batch, or abandoned claims): key back to
 * EMPTY, then the free bit. A dispatch of its own, after every op that could still read them, so
 * no slot is reused while a find may be reading it (that would be ABA: a find reading key K1, then
 * the value of a K2 that took the slot). Bindings: params, slots, masks, lists.
 */
export function releaseKernel(): Kernel {
  return cachedKernel('release', '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> masks: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> lists: array<atomic<u32>>;

${entryPoint()} {
  let count = min(atomicLoad(&lists[L_FREED]), params.list_cap);
  ${gridLoop('j', 'count')} {
    let g = atomicLoad(&lists[LIST_HEADER + L_FREED * params.list_cap + j]);
    atomicStore(&slots[hv_kw(g)], EMPTY);
    atomicOr(&masks[g / 32u], 1u << (g % 32u));
  }
}
`,
      { modules: [gridModule, commonModule] },
    ),
  );
}
