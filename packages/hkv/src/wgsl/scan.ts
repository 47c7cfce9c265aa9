import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { claimModule, erasedCountModule } from './claim';
import { hkvCoreModule, sliceAccessors, sliceBindings, VALUE_DEFAULTS, type ValueVariant, WORKGROUP_SIZE } from './common';

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
  variant: { ...VALUE_DEFAULTS, export: true } as ScanVariant,
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

// An export's matches are counted in workgroup memory and reserved with one global atomic (an
// atomic per match on one counter word ran one after another); erases count with count_erased.
var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;

/** Whether slot g holds an entry the predicate takes: (matches, score lo, score hi). */
fn scan_match(g: u32, k: vec2<u32>) -> vec3<u32> {
  if (hkv_is_free(k)) { return vec3<u32>(0u); }
  let sc = score_at(g);
  let kmask = vec2<u32>(params.kmask_lo, params.kmask_hi);
  if (any((k & kmask) != vec2<u32>(params.kval_lo, params.kval_hi))) { return vec3<u32>(0u); }
  if (hash_u64_lt(sc, vec2<u32>(params.smin_lo, params.smin_hi)) || hash_u64_lt(vec2<u32>(params.smax_lo, params.smax_hi), sc)) { return vec3<u32>(0u); }
  return vec3<u32>(1u, sc);
}

${entryPoint(WORKGROUP_SIZE)} {
${
  v.export
    ? /* wgsl */ `  // Whole workgroups go round the loop (its barriers), the lanes past the end matching nothing.
  ${chunkLoop('params.count', WORKGROUP_SIZE)} {
    let t = base + lid;
    let g = params.offset + t;
    _ = atomicLoad(&bucket_meta[0]); // bound in every variant
    var k = vec2<u32>(0u);
    var m = vec3<u32>(0u);
    if (t < params.count) {
      k = key_at(g);
      m = scan_match(g, k);
    }
    var rank = 0u;
    if (m.x != 0u) { rank = atomicAdd(&wg_count, 1u); }
    workgroupBarrier();
    if (lid == 0u) {
      let c = atomicLoad(&wg_count);
      if (c != 0u) { wg_base = atomicAdd(&out[0], c); }
      atomicStore(&wg_count, 0u);
    }
    let e = workgroupUniformLoad(&wg_base) + rank;
    if (m.x != 0u) {
      let at = OUT_HEAD + EV_WORDS * e;
      atomicStore(&out[at], k.x);
      atomicStore(&out[at + 1u], k.y);
      atomicStore(&out[at + 2u], m.y);
      atomicStore(&out[at + 3u], m.z);
      atomicStore(&out[at + 4u], g);
      for (var j = 0u; j < ${v.dim}u; j++) { ev_vals[e * ${v.dim}u + j] = val_load(g, j); }
    }
  }`
    : /* wgsl */ `  var erased = 0u;
  ${gridStrideLoop('t', 'params.count', WORKGROUP_SIZE)} {
    let g = params.offset + t;
    if (scan_match(g, key_at(g)).x != 0u) {
      reclaim(g);
      erased += 1u;
    }
  }
  count_erased(erased, lid);`
}
}
`,
      { modules: [gridModule, hkvCoreModule, claimModule, ...(v.export ? [] : [erasedCountModule])] },
    ),
});
