import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';
import { cachedKernel, entryPoint, gridLoop } from './kernel-cache';

/** Words of the stats kernel's output. */
export const StatsWord = { tableKeys: 0, stashKeys: 1, fullBuckets: 2, inconsistent: 3, locksHeld: 4 } as const;
export const STATS_WORDS = 8;

/** Maps job j to a bucket: table buckets 0..params.n-1 (params.aux0 of them), then the stash lines. */
const bucketOfJob = /* wgsl */ `
fn job_bucket(j: u32) -> u32 { return select(params.nalloc + (j - params.aux0), j, j < params.aux0); }`;

/**
 * Occupancy, counted from the slots themselves, and a consistency check between masks and keys
 * (a claimed slot must hold a live key and a free one EMPTY, once every batch has finished).
 * Jobs: the table's buckets (aux0 of them), then the stash lines. Bindings: params, slots_ro, masks_ro, out.
 */
export function statsKernel(): Kernel {
  return cachedKernel('stats', '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots_ro: array<u32>;
@group(0) @binding(2) var<storage, read> masks_ro: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<atomic<u32>>;
${bucketOfJob}

${entryPoint()} {
  ${gridLoop('j', 'params.n')} {
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
      { modules: [gridModule, commonModule] },
    ),
  );
}

/**
 * Copies every live pair out, densely (a workgroup-wide count, then one cursor atomic per block).
 * Jobs: the slots of the table's buckets (aux0 of them), then the stash's.
 * Bindings: params, slots_ro, out_keys, out_values, cursor.
 */
export function retrieveKernel(): Kernel {
  return cachedKernel('retrieve', '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots_ro: array<u32>;
@group(0) @binding(2) var<storage, read_write> out_keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> out_values: array<u32>;
@group(0) @binding(4) var<storage, read_write> cursor: array<atomic<u32>>;
var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;
${bucketOfJob}

${entryPoint()} {
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
      { modules: [gridModule, commonModule] },
    ),
  );
}
