import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, gridModule } from '@gpuhash/kernels';
import {
  hkvCoreModule,
  opConstants,
  opParams,
  scoreModule,
  sliceAccessors,
  sliceBindings,
  VALUE_DEFAULTS,
  type ValueVariant,
  valueWords,
  WORKGROUP_SIZE,
} from './common';
import { type GroupVariant, groupCopies, groupEntry, groupModule, groupQueue, readsQuads } from './group';

/** What the update pass does with a key it finds, and with one it does not. */
export const UpdateMode = {
  /** insertOrAssign: found: value and score; absent: pending insert. */
  upsert: 0,
  /** assign: found: value and score; absent: missing. */
  assign: 1,
  /** assignValues: found: value; absent: missing. */
  assignValues: 2,
  /** assignScores: found: score; absent: missing. */
  assignScores: 3,
  /** accumOrAssign: found and accumulate: value += delta; absent and assign: pending insert; else ignored. */
  accum: 4,
  /** findOrInsert: found: score (a touch); absent: pending insert. */
  touch: 5,
} as const;

export interface UpdateVariant extends ValueVariant, GroupVariant {
  policy: number;
  hasScores: boolean;
  mode: number;
  dual: boolean;
  /**
   * The cache is known to hold no key (the first batch after creation or a clear): every key is
   * absent, so the pass only sorts the keys (reserved, pending, missing) without reading the
   * digest lines. A bulk load from empty then skips a random read per key.
   */
  empty: boolean;
  /**
   * The dedupe pass ran: duplicates carry ST_DUPLICATE in a cleared status array, and the pass
   * takes only keys still ST_NONE. Without it the statuses are not cleared first: the pass writes
   * every key's.
   */
  deduped: boolean;
}

/**
 * The updater pass (NVIDIA's "updaters", and the first half of every insert): each key not yet
 * settled looks itself up through its bucket's digest line (a group of lanes per key, as the
 * reader pass, the line read as quads through a read-only binding) and, when present, updates its
 * value and/or score in place. It changes no key, digest or slot, so it needs no claim; keys are
 * distinct here (the dedupe pass ran), so no two invocations write one slot.
 */
export const updateKernel = defineKernel({
  name: 'hkv.update',
  workgroupSize: WORKGROUP_SIZE,
  params: opParams,
  variant: {
    ...VALUE_DEFAULTS,
    policy: 0,
    hasScores: false,
    mode: 0,
    dual: false,
    empty: false,
    deduped: true,
    subgroups: false,
    tile: 1,
  } as UpdateVariant,
  bindings: (v: UpdateVariant) => ({
    params: uniform(),
    bucket_meta: storage('read', readsQuads(v) ? 'vec4<u32>' : 'u32'),
    keys: storage('read', 'vec2<u32>'),
    scores: storage('read_write', 'vec2<u32>'),
    batch: storage('read', 'u32'),
    out: storage('read_write', 'u32'),
    ...(v.mode === UpdateMode.assignScores || v.mode === UpdateMode.touch
      ? {}
      : { in_vals: storage('read', valueWords(v.dim).element), ...sliceBindings(v.slices, 'read_write', 'v', valueWords(v.dim).element) }),
  }),
  source: (decls, v) => {
    const values = v.mode !== UpdateMode.assignScores && v.mode !== UpdateMode.touch;
    const coop = values && groupCopies(v);
    const io = valueWords(v.dim);
    const write = (g: string, i: string, j: string) =>
      v.mode === UpdateMode.accum
        ? `val_store(${g}, ${j}, val_load(${g}, ${j}) + in_vals[${i} * VW + ${j}]);`
        : `val_store(${g}, ${j}, in_vals[${i} * VW + ${j}]);`;
    return composeWgsl(
      /* wgsl */ `
${decls}

const MODE: u32 = ${v.mode}u;
${readsQuads(v) ? 'fn digest_quad(i: u32) -> vec4<u32> { return bucket_meta[i]; }' : 'fn digest_word(i: u32) -> u32 { return bucket_meta[i]; }'}
fn key_at(slot: u32) -> vec2<u32> { return keys[slot]; }
${io.wgsl}
${values ? sliceAccessors(v, true, 'v', 'val', io.quads) : ''}

${groupEntry(v.subgroups)} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, TILE);
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    var live = false;
    var k = vec2<u32>(EMPTY_LO, KEY_HI_RESERVED);
    if (i < params.n${v.deduped ? ' && out[OUT_HEAD + i] == ST_NONE' : ''}) {
      k = vec2<u32>(batch[2u * i], batch[2u * i + 1u]);
      if (hkv_is_reserved(k)) { out[OUT_HEAD + i] = ST_RESERVED; } else { live = true; }
    }
    let h = hkv_hash(k);
    var g = NONE;
    ${
      v.empty
        ? // No lookup; the bindings stay in the layout (one layout serves both variants).
          'if (params.n == 0u) { _ = bucket_meta[0]; _ = keys[0]; }'
        : groupQueue(
            'live',
            `let r = g_find_slot(g_bc2(k, src), g_bc2(h, src), params.mask);
      if (cg_lane() == src) { g = r; }`,
          )
    }
    var write_values = false;
    if (live) {
      let accumulate = MODE == 4u && batch[4u * params.n + i] != 0u;
      if (g == NONE) {
        if (MODE == 0u || MODE == 5u || (MODE == 4u && !accumulate)) {
          out[OUT_HEAD + i] = ST_PENDING;
        } else if (MODE == 4u) {
          out[OUT_HEAD + i] = ST_IGNORED;
        } else {
          out[OUT_HEAD + i] = ST_MISSING;
        }
      } else {
        out[OUT_HEAD + params.n + i] = g;
        if (MODE == 4u && !accumulate) {
          out[OUT_HEAD + i] = ST_IGNORED;
        } else {
          write_values = MODE != 3u && MODE != 5u;
          if (MODE != 2u) { scores[g] = score_hit(scores[g], i); }
          out[OUT_HEAD + i] = select(ST_UPDATED, ST_FOUND, MODE == 5u);
        }
      }
    }
    ${values && !coop ? `if (write_values) { for (var j = 0u; j < VW; j++) { ${write('g', 'i', 'j')} } }` : ''}
    ${
      coop
        ? groupQueue(
            'write_values',
            `let gs = cg_broadcast(g, src);
      let is = cg_broadcast(i, src);
      for (var j = cg_lane(); j < VW; j += TILE) { ${write('gs', 'is', 'j')} }`,
          )
        : ''
    }
  }
}
`,
      {
        modules: [gridModule, hkvCoreModule, groupModule(v.subgroups, readsQuads(v)), scoreModule],
        constants: { ...opConstants({ ...v }), TILE: v.tile },
      },
    );
  },
});
