import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { hkvCoreModule, sliceAccessors, sliceBindings, WORKGROUP_SIZE } from './common';

export interface RehashVariant {
  dim: number;
  oldSlices: number;
  oldSliceSlots: number;
  slices: number;
  sliceSlots: number;
}

/**
 * Growth by doubling: one invocation per bucket of the old table moves its entries into the new
 * table of twice the buckets. A key's new bucket is its old one or that plus the old bucket count
 * (one more hash bit), and no other old bucket feeds those two, so each invocation owns both
 * destinations and fills them in order with plain stores, no claims. The new table starts cleared.
 */
export const rehashKernel = defineKernel({
  name: 'hkv.rehash',
  workgroupSize: WORKGROUP_SIZE,
  params: { buckets: 'u32', mask: 'u32' },
  variant: { dim: 1, oldSlices: 1, oldSliceSlots: 128, slices: 1, sliceSlots: 128 } as RehashVariant,
  bindings: (v: RehashVariant) => ({
    params: uniform(),
    okeys: storage('read', 'vec2<u32>'),
    oscores: storage('read', 'vec2<u32>'),
    bucket_meta: storage('read_write', 'u32'),
    keys: storage('read_write', 'vec2<u32>'),
    scores: storage('read_write', 'vec2<u32>'),
    ...sliceBindings(v.oldSlices, 'read', 'u'),
    ...sliceBindings(v.slices, 'read_write'),
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${sliceAccessors({ dim: v.dim, slices: v.oldSlices, sliceSlots: v.oldSliceSlots, deviceSlots: 0xffffffff }, false, 'u', 'old')}
${sliceAccessors({ dim: v.dim, slices: v.slices, sliceSlots: v.sliceSlots, deviceSlots: 0xffffffff }, true)}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('b', 'params.buckets', WORKGROUP_SIZE)} {
    var fill = array<u32, 2>(0u, 0u);
    for (var s = 0u; s < BUCKET; s++) {
      let src = b * BUCKET + s;
      let k = okeys[src];
      if (hkv_is_free(k)) { continue; }
      let h = hkv_hash(k);
      let nb = hkv_bucket(h, params.mask);
      let which = select(0u, 1u, nb != b);
      let g = nb * BUCKET + fill[which];
      fill[which] += 1u;
      keys[g] = k;
      scores[g] = oscores[src];
      for (var j = 0u; j < ${v.dim}u; j++) { val_store(g, j, old_load(src, j)); }
      let w = g >> 2u;
      let sh = (g & 3u) * 8u;
      bucket_meta[w] = (bucket_meta[w] & ~(0xffu << sh)) | (hkv_digest(h) << sh);
    }
  }
}
`,
      { modules: [gridModule, hkvCoreModule] },
    ),
});
