import { defineKernel, InternalError, storage, uniform } from '@gpuhash/core';
import { composeWgsl } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';
import { hiveParams } from './params';

/** u32 words of a plan: three (x, y, z) workgroup counts, for pass A, release and pass B. */
export const PLAN_WORDS = 9;

/** Most workgroups each pass over the spill launches. */
export interface ListedCaps {
  passA: number;
  release: number;
  locked: number;
}

/**
 * The grids of the op passes over the bulk build's spill, from the spill's length, which only the
 * device knows: workgroups in proportion to its entries (pass B: `aux1` lanes per entry, a divisor of the workgroup), up to
 * the caps, and none at all when nothing spilled. One invocation.
 * params.aux1 = lanes per pass-B op; spill: word 0 its length; grids (out): PLAN_WORDS words, read
 * by dispatchWorkgroupsIndirect.
 */
export const listedPlanKernel = defineKernel({
  name: 'hive.listed-plan',
  workgroupSize: WORKGROUP_SIZE,
  // The caps are the dispatcher's to name: left at 0, the plan would launch nothing.
  variant: { passA: 0, release: 0, locked: 0 } satisfies ListedCaps,
  params: hiveParams,
  bindings: { params: uniform(), spill: storage('read', 'u32'), grids: storage('read_write', 'u32') },
  source: (decls, caps) => {
    if (!(caps.passA > 0 && caps.release > 0 && caps.locked > 0)) throw new InternalError('hive.listed-plan: every cap must be named');
    return composeWgsl(
      /* wgsl */ `
${decls}

/** Workgroups for items at per a workgroup, at most cap. */
fn hv_workgroups(items: u32, per: u32, cap: u32) -> u32 { return min(cap, items / per + select(0u, 1u, items % per != 0u)); }

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(local_invocation_index) lid: u32) {
  if (lid != 0u) { return; }
  let entries = spill[0];
  grids[0] = hv_workgroups(entries, ${WORKGROUP_SIZE}u, ${caps.passA}u);
  grids[3] = hv_workgroups(entries, ${WORKGROUP_SIZE}u, ${caps.release}u);
  grids[6] = hv_workgroups(entries, ${WORKGROUP_SIZE}u / params.aux1, ${caps.locked}u);
  for (var k = 0u; k < 3u; k++) {
    grids[3u * k + 1u] = 1u;
    grids[3u * k + 2u] = 1u;
  }
}`,
      { modules: [commonModule] },
    );
  },
});
