import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { claimModule } from './claim';
import { hkvCoreModule, sliceAccessors, sliceBindings, type ValueVariant, WORKGROUP_SIZE } from './common';

export interface ScanVariant extends ValueVariant {
  /** true: export the matching entries (exportBatch, exportBatchIf); false: erase them (eraseIf). */
  export: boolean;
}

/**
 * One invocation per slot of `[offset, offset + count)`: occupied slots whose key and score pass
 * the predicate `(key & kmask) == kval && smin <= score <= smax` are exported (compacted through
 * the counter `out[0]`: key, score and slot, 5 words per entry after the head, and `dim` floats in
 * `ev_vals`) or erased.
 * Every slot has one invocation, so erasing needs no claim.
 */
export const scanKernel = defineKernel({
  name: 'hkv.scan',
  workgroupSize: WORKGROUP_SIZE,
  params: {
    offset: 'u32',
    count: 'u32',
    mask: 'u32',
    kmask_lo: 'u32',
    kmask_hi: 'u32',
    kval_lo: 'u32',
    kval_hi: 'u32',
    smin_lo: 'u32',
    smin_hi: 'u32',
    smax_lo: 'u32',
    smax_hi: 'u32',
  },
  variant: { dim: 1, slices: 1, sliceSlots: 128, deviceSlots: 128, sliceBase: 0, export: true } as ScanVariant,
  bindings: (v: ScanVariant) => ({
    params: uniform(),
    bucket_meta: storage('read_write', 'atomic<u32>'),
    keys: storage('read_write', 'atomic<u32>'),
    scores: storage('read_write', 'atomic<u32>'),
    out: storage('read_write', 'atomic<u32>'),
    ...(v.export ? { ev_vals: storage('read_write', 'f32'), ...sliceBindings(v.slices, 'read') } : {}),
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${v.export ? sliceAccessors(v, false) : ''}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('t', 'params.count', WORKGROUP_SIZE)} {
    let g = params.offset + t;
    ${v.export ? '_ = atomicLoad(&bucket_meta[0]); // bound in every variant' : ''}
    let k = key_at(g);
    if (hkv_is_free(k)) { continue; }
    let sc = score_at(g);
    let kmask = vec2<u32>(params.kmask_lo, params.kmask_hi);
    if (any((k & kmask) != vec2<u32>(params.kval_lo, params.kval_hi))) { continue; }
    if (hash_u64_lt(sc, vec2<u32>(params.smin_lo, params.smin_hi)) || hash_u64_lt(vec2<u32>(params.smax_lo, params.smax_hi), sc)) { continue; }
    ${
      v.export
        ? `let e = atomicAdd(&out[0], 1u);
    let at = OUT_HEAD + EV_WORDS * e;
    atomicStore(&out[at], k.x);
    atomicStore(&out[at + 1u], k.y);
    atomicStore(&out[at + 2u], sc.x);
    atomicStore(&out[at + 3u], sc.y);
    atomicStore(&out[at + 4u], g);
    for (var j = 0u; j < ${v.dim}u; j++) { ev_vals[e * ${v.dim}u + j] = val_load(g, j); }`
        : `reclaim(g);
    atomicSub(&bucket_meta[counters_base()], 1u);
    atomicAdd(&out[0], 1u);`
    }
  }
}
`,
      { modules: [gridModule, hkvCoreModule, claimModule] },
    ),
});
