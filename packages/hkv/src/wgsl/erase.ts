import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { claimModule } from './claim';
import { hkvCoreModule, locateModule, WORKGROUP_SIZE } from './common';

/**
 * Erase: each key looks itself up; the invocation that claims its slot and still finds the key
 * there turns it into a reclaimed slot (reclaimed key, score 0, the empty digest), so a later insert
 * reuses it, and keeps the claim bit until the dispatch ends (the host clears the claim words). A
 * duplicate of the key in the batch finds the slot claimed or reclaimed and does nothing (it never
 * claims a slot another invocation wrote in this dispatch, so it cannot read the erased key back
 * from a stale word), so the count is of distinct keys erased. `out[0]` counts them.
 */
export const eraseKernel = defineKernel({
  name: 'hkv.erase',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32', mask: 'u32' },
  variant: { dual: false },
  bindings: {
    params: uniform(),
    bucket_meta: storage('read_write', 'atomic<u32>'),
    keys: storage('read_write', 'atomic<u32>'),
    scores: storage('read_write', 'atomic<u32>'),
    qkeys: storage('read', 'vec2<u32>'),
    out: storage('read_write', 'atomic<u32>'),
  },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}

// Erased keys are counted in workgroup memory and added to the counters with one global atomic
// each: an atomic per key on one counter word ran one after another.
var<workgroup> wg_erased: atomic<u32>;

${entryPoint(WORKGROUP_SIZE)} {
  var erased = 0u;
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let k = qkeys[i];
    if (hkv_is_reserved(k)) { continue; }
    let g = hkv_find_slot(k, hkv_hash(k), params.mask);
    if (g == NONE) { continue; }
    if (!try_claim(g)) { continue; }
    if (all(key_at(g) == k)) {
      reclaim(g);
      erased += 1u;
    } else {
      release(g);
    }
  }
  if (erased != 0u) { atomicAdd(&wg_erased, erased); }
  workgroupBarrier();
  if (lid == 0u) {
    let c = atomicLoad(&wg_erased);
    if (c != 0u) {
      atomicSub(&bucket_meta[counters_base()], c);
      atomicAdd(&out[0], c);
    }
  }
}
`,
      { modules: [gridModule, hkvCoreModule, claimModule, locateModule], constants: { DUAL: v.dual } },
    ),
});
