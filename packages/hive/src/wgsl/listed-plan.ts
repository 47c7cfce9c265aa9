import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';
import { cachedKernel, entryPoint, gridLoop } from './kernel-cache';

/** u32 words of one chunk's grids: three (x, y, z) workgroup counts, for pass A, release, pass B. */
export const PLAN_WORDS = 9;

/** Most workgroups each listed pass launches for a chunk (the dispatcher's caps). */
export interface ListedCaps {
  passA: number;
  release: number;
  locked: number;
}

/**
 * The grids of the op passes over the bulk build's spill, chunk by chunk, from the spill's length
 * (known only on the device). The host encodes one pass A, release and pass B per chunk of the
 * batch, since the spill may be as long as the batch; most chunks lie past the end of the list (at
 * load 0.95, 5% of the keys spill), and their passes now launch no workgroup instead of a full grid
 * that finds nothing to do. A chunk's passes get workgroups in proportion to its entries (pass B:
 * `aux1` lanes per entry), up to the caps.
 * Bindings: params (n = chunks, aux0 = entries per chunk, aux1 = lanes per pass-B op), spill
 * (word 0: its length), grids (out: PLAN_WORDS per chunk, read by dispatchWorkgroupsIndirect).
 */
export function listedPlanKernel(caps: ListedCaps): Kernel {
  return cachedKernel('listed-plan', `${caps.passA}.${caps.release}.${caps.locked}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> spill: array<u32>;
@group(0) @binding(2) var<storage, read_write> grids: array<u32>;

fn hv_workgroups(lanes: u32, cap: u32) -> u32 { return min(cap, (lanes + ${WORKGROUP_SIZE - 1}u) / ${WORKGROUP_SIZE}u); }

${entryPoint()} {
  let len = spill[0];
  ${gridLoop('c', 'params.n')} {
    let start = c * params.aux0;
    let entries = min(params.aux0, len - min(len, start));
    let g = ${PLAN_WORDS}u * c;
    grids[g] = hv_workgroups(entries, ${caps.passA}u);
    grids[g + 3u] = hv_workgroups(entries, ${caps.release}u);
    grids[g + 6u] = hv_workgroups(entries * params.aux1, ${caps.locked}u);
    for (var k = 0u; k < 3u; k++) {
      grids[g + 3u * k + 1u] = 1u;
      grids[g + 3u * k + 2u] = 1u;
    }
  }
}`,
      { modules: [gridModule, commonModule] },
    ),
  );
}
