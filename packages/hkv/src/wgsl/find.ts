import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { hkvCoreModule, locateModule, sliceAccessors, sliceBindings, type ValueVariant, WORKGROUP_SIZE } from './common';

export interface FindVariant extends ValueVariant {
  /** Copy the values out (find); false for contains. */
  values: boolean;
  /** Write each found key's score (find with scores). */
  scores: boolean;
  dual: boolean;
  /** Write each key's slot (NONE when absent) instead of a 0/1 flag: the host tier gathers the host-resident values. */
  slots: boolean;
}

/**
 * The reader pass (find, contains): one digest line decides a miss; a digest match compares the
 * full key. Readers never run in a dispatch that changes slots, so plain loads see whole entries.
 * `found` is one word per key (1 found, 0 not); `out_scores` two words per key; `out_vals` `dim`
 * floats per key, zeros for a miss.
 */
export const findKernel = defineKernel({
  name: 'hkv.find',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32', mask: 'u32' },
  variant: { dim: 1, slices: 1, sliceSlots: 128, deviceSlots: 128, values: true, scores: false, dual: false, slots: false } as FindVariant,
  bindings: (v: FindVariant) => ({
    params: uniform(),
    bucket_meta: storage('read', 'u32'),
    keys: storage('read', 'vec2<u32>'),
    qkeys: storage('read', 'vec2<u32>'),
    found: storage('read_write', 'u32'),
    ...(v.scores ? { scores: storage('read', 'vec2<u32>'), out_scores: storage('read_write', 'vec2<u32>') } : {}),
    ...(v.values ? { out_vals: storage('read_write', 'f32'), ...sliceBindings(v.slices, 'read') } : {}),
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}

fn digest_word(i: u32) -> u32 { return bucket_meta[i]; }
fn key_at(slot: u32) -> vec2<u32> { return keys[slot]; }
${v.values ? sliceAccessors(v, false) : ''}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let k = qkeys[i];
    var g = NONE;
    if (!hkv_is_reserved(k)) { g = hkv_find_slot(k, hkv_hash(k), params.mask); }
    found[i] = ${v.slots ? 'g' : 'select(0u, 1u, g != NONE)'};
    ${v.scores ? 'out_scores[i] = select(vec2<u32>(0u, 0u), scores[min(g, arrayLength(&scores) - 1u)], g != NONE);' : ''}
    ${
      v.values
        ? `if (g != NONE) {
      for (var j = 0u; j < ${v.dim}u; j++) { out_vals[i * ${v.dim}u + j] = val_load(g, j); }
    } else {
      for (var j = 0u; j < ${v.dim}u; j++) { out_vals[i * ${v.dim}u + j] = 0.0; }
    }`
        : ''
    }
  }
}
`,
      { modules: [gridModule, hkvCoreModule, locateModule], constants: { DUAL: v.dual } },
    ),
});
