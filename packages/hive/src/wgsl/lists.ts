import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, wgslModule } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';
import { hiveParams } from './params';

/**
 * Appending to the lists buffer one entry at a time (one atomicAdd each); `report_failure` is the
 * failed list's (Hive's failures live in the lists buffer, not a failed list of their own).
 */
export const listsModule = wgslModule(
  'hive.lists',
  /* wgsl */ `
fn push_list(list: u32, entry: u32) {
  let at = atomicAdd(&lists[list], 1u);
  if (at < params.list_cap) { atomicStore(&lists[LIST_HEADER + list * params.list_cap + at], entry); }
}
// Every failure is counted; indices are kept while the list has room (it holds a batch).
fn report_failure(index: u32) { push_list(L_FAILED, index); }
`,
  { requires: [commonModule], needs: ['params', 'lists'] },
);

/**
 * Appends a bulk build part's failed list (`part_lists`, a lists buffer of `aux1` entries a list) to the
 * table's (`lists`, `list_cap` a list), each batch index shifted by the part's first index (aux0):
 * the parts of one batch then report as one batch. One workgroup; the count is added whole, the
 * entries kept while the list has room, as report_failure keeps them.
 */
export const appendFailedKernel = defineKernel({
  name: 'hive.append-failed',
  workgroupSize: WORKGROUP_SIZE,
  params: hiveParams,
  bindings: { params: uniform(), part_lists: storage('read', 'u32'), lists: storage('read_write', 'atomic<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> wg_base: u32;

${entryPoint(WORKGROUP_SIZE)} {
  let count = part_lists[L_FAILED];
  if (lid == 0u) { wg_base = atomicAdd(&lists[L_FAILED], count); }
  let base = workgroupUniformLoad(&wg_base);
  let kept = min(count, params.aux1);
  for (var j = lid; j < kept && base + j < params.list_cap; j += ${WORKGROUP_SIZE}u) {
    atomicStore(&lists[LIST_HEADER + L_FAILED * params.list_cap + base + j], part_lists[LIST_HEADER + L_FAILED * params.aux1 + j] + params.aux0);
  }
}
`,
      { modules: [commonModule] },
    ),
});
