import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';
import { hiveParams } from './params';
import { ONE_WINDOW, type SlotWindows, slotsBinding, slotWindows } from './windows';

/** Words of the stats kernel's output. */
export const StatsWord = { tableKeys: 0, stashKeys: 1, fullBuckets: 2, inconsistent: 3, locksHeld: 4 } as const;
export const STATS_WORDS = 8;

/** Maps job j to a bucket: table buckets 0..params.n-1 (params.aux0 of them), then the stash lines. */
const bucketOfJob = /* wgsl */ `
fn job_bucket(j: u32) -> u32 { return select(params.nalloc + (j - params.aux0), j, j < params.aux0); }`;

/**
 * Occupancy, counted from the slots themselves, and a consistency check between masks and keys
 * (a claimed slot must hold a live key and a free one EMPTY, once every batch has finished).
 * Jobs: the table's buckets (aux0 of them), then the stash lines.
 */
export const statsKernel = defineKernel({
  name: 'hive.stats',
  workgroupSize: WORKGROUP_SIZE,
  variant: ONE_WINDOW,
  params: hiveParams,
  bindings: (v: SlotWindows) => ({
    params: uniform(),
    slots_ro: slotsBinding('read', 'u32', v),
    masks_ro: storage('read', 'u32'),
    out: storage('read_write', 'atomic<u32>'),
  }),
  source: (decls, w) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${bucketOfJob}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('j', 'params.n', WORKGROUP_SIZE)} {
    let b = job_bucket(j);
    let free = masks_ro[b];
    var live = 0u;
    var bad = 0u;
    for (var s = 0u; s < 32u; s++) {
      let k = slots_ro[hv_key_word(b, s)];
      let claimed = ((free >> s) & 1u) == 0u;
      if (k < TOMBSTONE) { live += 1u; }
      if (claimed != (k < TOMBSTONE) || (!claimed && k != EMPTY)) { bad += 1u; }
    }
    let stash = j >= params.aux0;
    if (live != 0u) { atomicAdd(&out[select(${StatsWord.tableKeys}u, ${StatsWord.stashKeys}u, stash)], live); }
    if (!stash && free == 0u) { atomicAdd(&out[${StatsWord.fullBuckets}u], 1u); }
    if (bad != 0u) { atomicAdd(&out[${StatsWord.inconsistent}u], bad); }
    if (!stash && (masks_ro[params.lock_base + b] & 1u) != 0u) { atomicAdd(&out[${StatsWord.locksHeld}u], 1u); }
  }
}
`,
      { modules: [gridModule, commonModule], windows: slotWindows(w, { slots_ro: 'u32' }) },
    ),
});

/**
 * Copies every live pair out, densely (a workgroup-wide count, then one cursor atomic per block).
 * Jobs: the slots of the table's buckets (aux0 of them), then the stash's.
 */
export const retrieveKernel = defineKernel({
  name: 'hive.retrieve',
  workgroupSize: WORKGROUP_SIZE,
  variant: ONE_WINDOW,
  params: hiveParams,
  bindings: (v: SlotWindows) => ({
    params: uniform(),
    slots_ro: slotsBinding('read', 'u32', v),
    out_keys: storage('read_write', 'u32'),
    out_values: storage('read_write', 'u32'),
    cursor: storage('read_write', 'atomic<u32>'),
  }),
  source: (decls, w) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;
${bucketOfJob}

${entryPoint(WORKGROUP_SIZE)} {
  let blocks = (params.n + ${WORKGROUP_SIZE}u - 1u) / ${WORKGROUP_SIZE}u;
  for (var blk = grid_workgroup(wid, nwg); blk < blocks; blk += nwg.x * nwg.y) {
    let j = blk * ${WORKGROUP_SIZE}u + lid;
    var s = vec2<u32>(EMPTY, 0u);
    if (j < params.n) {
      let g = job_bucket(j / 32u) * 32u + j % 32u;
      s = vec2<u32>(slots_ro[hv_kw(g)], slots_ro[hv_vw(g)]);
    }
    let live = s.x < TOMBSTONE;
    var at = 0u;
    if (live) { at = atomicAdd(&wg_count, 1u); }
    workgroupBarrier();
    if (lid == 0u) {
      wg_base = atomicAdd(&cursor[0], atomicLoad(&wg_count));
      atomicStore(&wg_count, 0u);
    }
    workgroupBarrier();
    if (live && wg_base + at < arrayLength(&out_keys)) {
      out_keys[wg_base + at] = s.x;
      out_values[wg_base + at] = s.y;
    }
    workgroupBarrier();
  }
}
`,
      { modules: [gridModule, commonModule], windows: slotWindows(w, { slots_ro: 'u32' }) },
    ),
});
