import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, gridModule } from '@gpuhash/kernels';
import { hkvCoreModule, sliceAccessors, sliceBindings, VALUE_DEFAULTS, type ValueVariant, valueWords, WORKGROUP_SIZE } from './common';
import { batchLookupModule, type GroupVariant, groupCopies, groupEntry, groupModule, groupQueue, readsQuads } from './group';

export interface FindVariant extends ValueVariant, GroupVariant {
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
 * full key. Readers never run in a dispatch that changes slots, so plain loads see whole entries
 * (and the digest lines are read as 16-byte quads through a read-only binding).
 * Cooperative: a group of TILE lanes looks up its lanes' keys, each lane reading its share of the
 * line (see group.ts): side by side for groups of up to 8 (g_find_own: the group's lines, then its
 * candidate keys, loaded together), one after the other for larger groups; every lane then writes its own key's answer
 * (coalesced), and the group copies value vectors together, lanes over j, when dim >= 4.
 * `found` is one word per key (1 found, 0 not); `out_scores` two words per key; `out_vals` `dim`
 * floats per found key (values in other windows of buffers: written by their copy pass). A miss
 * leaves its row of `out_vals` as it was, as NVIDIA's find does: a dim-64 miss would otherwise
 * write 256 bytes it never read. The host API clears its own array first.
 */
export const findKernel = defineKernel({
  name: 'hkv.find',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32', mask: 'u32' },
  variant: {
    ...VALUE_DEFAULTS,
    values: true,
    scores: false,
    dual: false,
    slots: false,
    subgroups: false,
    tile: 1,
  } as FindVariant,
  bindings: (v: FindVariant) => ({
    params: uniform(),
    bucket_meta: storage('read', readsQuads(v) ? 'vec4<u32>' : 'u32'),
    keys: storage('read', 'vec2<u32>'),
    qkeys: storage('read', 'vec2<u32>'),
    found: storage('read_write', 'u32'),
    ...(v.scores ? { scores: storage('read', 'vec2<u32>'), out_scores: storage('read_write', 'vec2<u32>') } : {}),
    ...(v.values
      ? { out_vals: storage('read_write', valueWords(v.dim).element), ...sliceBindings(v.slices, 'read', 'v', valueWords(v.dim).element) }
      : {}),
  }),
  source: (decls, v) => {
    const coop = v.values && groupCopies(v);
    // Groups that read quads take their keys side by side (batchLookupModule).
    const batched = readsQuads(v);
    const io = valueWords(v.dim);
    return composeWgsl(
      /* wgsl */ `
${decls}

${readsQuads(v) ? 'fn digest_quad(i: u32) -> vec4<u32> { return bucket_meta[i]; }' : 'fn digest_word(i: u32) -> u32 { return bucket_meta[i]; }'}
fn key_at(slot: u32) -> vec2<u32> { return keys[slot]; }
${io.wgsl}
${v.values ? sliceAccessors(v, false, 'v', 'val', io.quads) : ''}

${groupEntry(v.subgroups)} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, TILE);
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    let in_batch = i < params.n;
    var k = vec2<u32>(EMPTY_LO, KEY_HI_RESERVED);
    if (in_batch) { k = qkeys[i]; }
    let h = hkv_hash(k);
    let looked = in_batch && !hkv_is_reserved(k);
    ${
      batched
        ? `var g = g_find_own(k, h, looked, params.mask);
    ${
      v.dual
        ? groupQueue(
            'looked && g == NONE',
            `let r = g_find_second(g_bc2(k, src), g_bc2(h, src), params.mask);
      if (cg_lane() == src) { g = r; }`,
          )
        : ''
    }`
        : `var g = NONE;
    ${groupQueue(
      'looked',
      `let r = g_find_slot(g_bc2(k, src), g_bc2(h, src), params.mask);
      if (cg_lane() == src) { g = r; }`,
    )}`
    }
    if (in_batch) {
      found[i] = ${v.slots ? 'g' : 'select(0u, 1u, g != NONE)'};
      ${v.scores ? 'out_scores[i] = select(vec2<u32>(0u, 0u), scores[min(g, arrayLength(&scores) - 1u)], g != NONE);' : ''}
      ${v.values && !coop ? `if (g != NONE && !val_elsewhere(g)) { for (var j = 0u; j < VW; j++) { out_vals[i * VW + j] = val_load(g, j); } }` : ''}
    }
    ${
      coop
        ? groupQueue(
            // Keys whose vector lies in another window are left to that window's copy pass.
            'in_batch && g != NONE && !val_elsewhere(g)',
            `let gs = cg_broadcast(g, src);
      let is = cg_broadcast(i, src);
      for (var j = cg_lane(); j < VW; j += TILE) { out_vals[is * VW + j] = val_load(gs, j); }`,
          )
        : ''
    }
  }
}
`,
      {
        modules: [gridModule, hkvCoreModule, batched ? batchLookupModule(v.subgroups, v.tile) : groupModule(v.subgroups, false)],
        constants: { DUAL: v.dual, TILE: v.tile, DIM: v.dim },
      },
    );
  },
});
