import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, entryPoint, gridModule } from '@gpuhash/kernels';
import { hkvCoreModule, sliceAccessors, sliceBindings, VALUE_DEFAULTS, type ValueVariant, valueWords, WORKGROUP_SIZE } from './common';
import { type GroupVariant, groupCopies, groupEntry, groupModule, groupQueue, readsQuads } from './group';
import { listHeadWords } from './windows';

export interface FindVariant extends ValueVariant, GroupVariant {
  /** Copy the values out (find); false for contains. */
  values: boolean;
  /** Write each found key's score (find with scores). */
  scores: boolean;
  dual: boolean;
  /** Write each key's slot (NONE when absent) instead of a 0/1 flag: the host tier gathers the host-resident values. */
  slots: boolean;
  /**
   * Lists of a partition by bucket window (0: none, the pass runs over the batch): the pass runs
   * over list `params.list`'s keys, whose buckets and values all lie in the window it binds.
   */
  lists: number;
  /**
   * Listed, dim 1: leave each key's answer in its list entry (value bits, slot) for
   * findAnswersKernel, which writes found and values in batch order: a pass over one list would
   * otherwise write single words scattered over the whole batch.
   */
  answers: boolean;
}

/**
 * The reader pass (find, contains): one digest line decides a miss; a digest match compares the
 * full key. Readers never run in a dispatch that changes slots, so plain loads see whole entries
 * (and the digest lines are read as 16-byte quads through a read-only binding).
 * Cooperative: a group of TILE lanes looks up its lanes' keys one after the other, each lane
 * reading its share of the line (see group.ts); every lane then writes its own key's answer
 * (coalesced), and the group copies value vectors together, lanes over j, when dim >= 4.
 * `found` is one word per key (1 found, 0 not); `out_scores` two words per key; `out_vals` `dim`
 * floats per found key (values in other windows of buffers: written by their copy pass). A miss
 * leaves its row of `out_vals` as it was, as NVIDIA's find does: a dim-64 miss would otherwise
 * write 256 bytes it never read. The host API clears its own array first.
 */
export const findKernel = defineKernel({
  name: 'hkv.find',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32', mask: 'u32', list: 'u32' },
  variant: {
    ...VALUE_DEFAULTS,
    values: true,
    scores: false,
    dual: false,
    slots: false,
    lists: 0,
    answers: false,
    subgroups: false,
    tile: 1,
  } as FindVariant,
  bindings: (v: FindVariant) => ({
    params: uniform(),
    bucket_meta: storage('read', readsQuads(v) ? 'vec4<u32>' : 'u32'),
    keys: storage('read', 'vec2<u32>'),
    qkeys: storage('read', 'vec2<u32>'),
    // With answers in the lists, found and values are written by findAnswersKernel.
    ...(v.answers ? {} : { found: storage('read_write', 'u32') }),
    ...(v.lists > 0 ? { lists: storage(v.answers ? 'read_write' : 'read', 'u32') } : {}),
    ...(v.scores ? { scores: storage('read', 'vec2<u32>'), out_scores: storage('read_write', 'vec2<u32>') } : {}),
    ...(v.values && !v.answers ? { out_vals: storage('read_write', valueWords(v.dim).element) } : {}),
    ...(v.values ? sliceBindings(v.slices, 'read', 'v', valueWords(v.dim).element) : {}),
  }),
  source: (decls, v) => {
    const coop = v.values && groupCopies(v);
    const listed = v.lists > 0;
    // A listed pass copies its chunk's found vectors with the whole workgroup, one quad per
    // invocation, rows side by side (as the copy pass does), after the chunk's lookups.
    const staged = coop && listed;
    const io = valueWords(v.dim);
    return composeWgsl(
      /* wgsl */ `
${decls}

${readsQuads(v) ? 'fn digest_quad(i: u32) -> vec4<u32> { return bucket_meta[i]; }' : 'fn digest_word(i: u32) -> u32 { return bucket_meta[i]; }'}
fn key_at(slot: u32) -> vec2<u32> { return keys[slot]; }
${io.wgsl}
${v.values ? sliceAccessors(v, false, 'v', 'val', io.quads) : ''}
${listed ? listedPrologue(v.lists) : ''}
${staged ? STAGED_DECLS : ''}

${groupEntry(v.subgroups)} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, TILE);
  ${listed ? 'let listed = listed_range(lid);' : ''}
  ${chunkLoop(listed ? 'listed.x' : 'params.n', WORKGROUP_SIZE)} {
    ${
      listed
        ? `let in_batch = base + lid < listed.x;
    var i = 0u;
    if (in_batch) { i = lists[LIST_HEAD + 2u * (listed.y + base + lid)]; }`
        : `let i = base + lid;
    let in_batch = i < params.n;`
    }
    var k = vec2<u32>(EMPTY_LO, KEY_HI_RESERVED);
    if (in_batch) { k = qkeys[i]; }
    let h = hkv_hash(k);
    var g = NONE;
    ${groupQueue(
      'in_batch && !hkv_is_reserved(k)',
      `let r = g_find_slot(g_bc2(k, src), g_bc2(h, src), params.mask);
      if (cg_lane() == src) { g = r; }`,
    )}
    ${
      v.answers
        ? `if (in_batch) {
      let e = LIST_HEAD + 2u * (listed.y + base + lid);
      lists[e] = bitcast<u32>(val_load(g, 0u));
      lists[e + 1u] = g;
    }`
        : `if (in_batch) {
      found[i] = ${v.slots ? 'g' : 'select(0u, 1u, g != NONE)'};
      ${v.scores ? 'out_scores[i] = select(vec2<u32>(0u, 0u), scores[min(g, arrayLength(&scores) - 1u)], g != NONE);' : ''}
      ${v.values && !coop ? 'if (g != NONE && !val_elsewhere(g)) { for (var j = 0u; j < VW; j++) { out_vals[i * VW + j] = val_load(g, j); } }' : ''}
    }`
    }
    ${
      staged
        ? `stage_hit(in_batch && val_here(g), i, g);
    let hits = staged_hits(lid);
    for (var f = lid; f < hits * VW; f += ${WORKGROUP_SIZE}u) {
      let e = f / VW;
      out_vals[wg_hit_i[e] * VW + f % VW] = val_load(wg_hit_g[e], f % VW);
    }
    workgroupBarrier();`
        : coop
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
        modules: [gridModule, hkvCoreModule, groupModule(v.subgroups, readsQuads(v))],
        constants: { DUAL: v.dual, TILE: v.tile, DIM: v.dim },
      },
    );
  },
});

/** A listed pass's list: (its length, its first entry), the same on every invocation of a workgroup. */
function listedPrologue(lists: number): string {
  return /* wgsl */ `const LIST_HEAD: u32 = ${listHeadWords(lists)}u;
var<workgroup> wg_listed: vec2<u32>;
fn listed_range(lid: u32) -> vec2<u32> {
  if (lid == 0u) {
    let count = lists[params.list];
    wg_listed = vec2<u32>(count, lists[${lists}u + params.list] - count);
  }
  return workgroupUniformLoad(&wg_listed);
}`;
}

/** A chunk's found keys (batch index, slot), gathered in workgroup memory for the staged copies. */
const STAGED_DECLS = /* wgsl */ `
var<workgroup> wg_hit_count: atomic<u32>;
var<workgroup> wg_hits: u32;
var<workgroup> wg_hit_i: array<u32, ${WORKGROUP_SIZE}>;
var<workgroup> wg_hit_g: array<u32, ${WORKGROUP_SIZE}>;
fn stage_hit(hit: bool, i: u32, g: u32) {
  if (hit) {
    let e = atomicAdd(&wg_hit_count, 1u);
    wg_hit_i[e] = i;
    wg_hit_g[e] = g;
  }
}
/** How many keys the chunk staged (after a barrier), the counter cleared for the next chunk. */
fn staged_hits(lid: u32) -> u32 {
  workgroupBarrier();
  if (lid == 0u) { wg_hits = atomicExchange(&wg_hit_count, 0u); }
  return workgroupUniformLoad(&wg_hits);
}`;

/**
 * After the listed passes of a dim-1 find (FindVariant.answers): key i's answer is in the list
 * entry its partition recorded in found[i]; found and values are written in batch order. A miss,
 * and a key whose value lives in the host tier, leaves its value as it was.
 */
export const findAnswersKernel = defineKernel({
  name: 'hkv.find.answers',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32' },
  variant: { lists: 1, slots: false, deviceSlots: 128 },
  bindings: {
    params: uniform(),
    lists: storage('read', 'u32'),
    found: storage('read_write', 'u32'),
    out_vals: storage('read_write', 'f32'),
  },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
const LIST_HEAD: u32 = ${listHeadWords(v.lists)}u;
${entryPoint(WORKGROUP_SIZE)} {
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    if (i < params.n) {
      let e = LIST_HEAD + 2u * found[i];
      let g = lists[e + 1u];
      found[i] = ${v.slots ? 'g' : 'select(0u, 1u, g != NONE)'};
      if (g < ${v.deviceSlots}u) { out_vals[i] = bitcast<f32>(lists[e]); }
    }
  }
}
`,
      { modules: [gridModule, hkvCoreModule] },
    ),
});
