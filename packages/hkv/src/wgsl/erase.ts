import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { claimModule, erasedCountModule } from './claim';
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
  count_erased(erased, lid);
}
`,
      { modules: [gridModule, hkvCoreModule, claimModule, erasedCountModule, locateModule], constants: { DUAL: v.dual } },
    ),
});
