import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, gridModule } from '@gpuhash/kernels';
import { claimModule } from './claim';
import {
  hkvCoreModule,
  MAX_ATTEMPTS,
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
import { type GroupVariant, groupEntry, groupQueue, insertGroupModule } from './group';

export interface InsertVariant extends ValueVariant, GroupVariant {
  policy: number;
  hasScores: boolean;
  /** Write each evicted entry (key, score, value) to the out buffers, compacted by a counter. */
  evict: boolean;
  /** Dual-bucket mode: two candidate buckets, the less loaded while there is room, then the lower minimum. */
  dual: boolean;
  /**
   * The values span several windows of buffers: a placed key's status carries VALUES_PENDING until
   * the scatter passes have written its value into the other windows.
   */
  windowed: boolean;
  /**
   * The first pass of an insertOrAssign (the update pass folded in): each key is looked up first
   * and, when present, its value and score updated in place; an absent key takes a free slot, and a
   * key whose bucket has none stays pending for the next pass, which may evict. So every update
   * lands before any eviction, as with a separate update pass, and the line is read once.
   */
  lookup: boolean;
  /** lookup: the cache is known to hold no key, so the lookups are skipped. */
  empty: boolean;
  /** lookup: the dedupe pass ran (duplicates carry ST_DUPLICATE; the other statuses are cleared). */
  deduped: boolean;
  /**
   * windowed, without eviction records: the pass binds no values and writes none; every placed or
   * updated key's vector, the first window's too, is copied from the lists after the last pass.
   * Its random accesses then span the digest lines, keys and scores only.
   */
  bare: boolean;
}

/**
 * The inserter pass: each key the update pass left pending (or an earlier insert pass left busy)
 * takes a slot of its bucket. A group of TILE lanes serves its lanes' keys one after the other
 * (see group.ts): the lanes read the digest line and the scores together, lane 0 claims, and every
 * decision is broadcast, so the group runs one key's steps in lockstep.
 * 1. A free slot: the digest line's bytes equal to the empty digest, in probe order from the key's
 *    start word (no stored key has that digest, so a claimed one is free); claim it, write it.
 * 2. Else the minimum score of the unclaimed slots (a reduction over the lanes: score high word,
 *    low word, then probe order). Custom scores: a key scoring below it is refused (admission
 *    control; ties are admitted). Claim that slot, re-read its score and key: if the score rose
 *    above the minimum seen, release and start again (NVIDIA's re-check); otherwise report the old
 *    entry (insertAndEvict) and overwrite it.
 * A slot written by this pass keeps its claim bit until the pass ends (see claim.ts): it is written
 * at most once per pass, and everything a claimer reads (key, score, value) was written by an
 * earlier dispatch. So a key placed by this pass is evicted by a later pass, never by this one.
 * Every loop is bounded: a key still without a slot after MAX_ATTEMPTS, or whose bucket has no
 * unclaimed slot left, is reported busy and the next pass (or the host) runs it again.
 * The live-entry counter takes one atomicAdd per workgroup, not one per key.
 */
export const insertKernel = defineKernel({
  name: 'hkv.insert',
  workgroupSize: WORKGROUP_SIZE,
  params: opParams,
  variant: {
    ...VALUE_DEFAULTS,
    policy: 0,
    hasScores: false,
    evict: false,
    dual: false,
    windowed: false,
    lookup: false,
    empty: false,
    deduped: true,
    bare: false,
    subgroups: false,
    tile: 1,
  } as InsertVariant,
  bindings: (v: InsertVariant) => ({
    params: uniform(),
    bucket_meta: storage('read_write', 'atomic<u32>'),
    keys: storage('read_write', 'atomic<u32>'),
    scores: storage('read_write', 'atomic<u32>'),
    batch: storage('read', 'u32'),
    ...(v.bare ? {} : { in_vals: storage('read', valueWords(v.dim).element) }),
    out: storage('read_write', 'atomic<u32>'),
    ...(v.evict ? { ev_vals: storage('read_write', valueWords(v.dim).element) } : {}),
    ...(v.bare ? {} : sliceBindings(v.slices, 'read_write', 'v', valueWords(v.dim).element)),
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}

const MAX_ATTEMPTS: u32 = ${MAX_ATTEMPTS}u;
const EVICT: bool = ${v.evict};
const WINDOWED: bool = ${v.windowed};
const LOOKUP: bool = ${v.lookup};
const LOOKUP_EMPTY: bool = ${v.empty};
const DEDUPED: bool = ${v.deduped};
${valueWords(v.dim).wgsl}
${v.bare ? '' : sliceAccessors(v, true, 'v', 'val', valueWords(v.dim).quads)}

var<workgroup> wg_added: atomic<u32>;

/** The group writes slot g: the value (lanes over j), then lane 0 the score, key and digest. */
fn g_write_slot(g: u32, i: u32, k: vec2<u32>, d: u32, score: vec2<u32>) {
  ${v.bare ? '' : 'for (var j = cg_lane(); j < VW; j += TILE) { val_store(g, j, in_vals[i * VW + j]); }'}
  if (cg_lane() == 0u) {
    set_score(g, score);
    set_key(g, k);
    set_digest(g, d);
  }
}

/** The group updates present key i in slot g: the value (lanes over j), then lane 0 the score. */
fn g_update_slot(g: u32, i: u32) {
  ${v.bare ? '' : 'for (var j = cg_lane(); j < VW; j += TILE) { val_store(g, j, in_vals[i * VW + j]); }'}
  if (cg_lane() == 0u) { set_score(g, score_hit(score_at(g), i)); }
}

/** One key's placement by the group: (status, slot). Every value is the same on every lane. */
fn g_insert(i: u32, k: vec2<u32>, h: vec2<u32>, desired: vec2<u32>) -> vec2<u32> {
  let b1 = hkv_bucket(h, params.mask);
  let b2 = select(b1, hkv_bucket2(h, params.mask, b1), DUAL);
  let d = hkv_key_digest(h);
  let start = hkv_start_word(h);
  for (var attempt = 0u; attempt < MAX_ATTEMPTS; attempt++) {
    var first = b1;
    var second = b2;
    var m1 = vec4<u32>(0u);
    var m2 = vec4<u32>(0u);
    if (LOOKUP && !LOOKUP_EMPTY && attempt == 0u) {
      // The lookup and the free-slot candidates from one read of each line. A present key's slot
      // is claimed by no one in this pass (it evicts nothing, and erases run in dispatches of their
      // own); no other key of the batch is this one (dedupe), so later attempts need not look again.
      let s1 = g_scan_line(b1, k, d);
      var found = s1.slot;
      m1 = s1.empty;
      if (DUAL && found == NONE) {
        let s2 = g_scan_line(b2, k, d);
        found = s2.slot;
        m2 = s2.empty;
      }
      if (found != NONE) {
        g_update_slot(found, i);
        return vec2<u32>(ST_UPDATED, found);
      }
    } else {
      m1 = g_empty_mask(b1);
      if (DUAL) { m2 = g_empty_mask(b2); }
    }
    if (DUAL) {
      if (g_count(m2) > g_count(m1)) {
        first = b2;
        second = b1;
        let t = m1;
        m1 = m2;
        m2 = t;
      }
    }
    var free = g_claim_free(first, m1, start);
    if (DUAL && free == NONE) { free = g_claim_free(second, m2, start); }
    if (free != NONE) {
      g_write_slot(free, i, k, d, desired);
      return vec2<u32>(ST_INSERTED, free);
    }
    // No free slot left: the next pass evicts, after every update of the batch has landed.
    if (LOOKUP) { return vec2<u32>(ST_PENDING, NONE); }
    // The bucket is full (both are): the minimum score among the slots no one holds.
    var v = g_min_victim(b1, start);
    if (DUAL) {
      let v2 = g_min_victim(b2, start);
      if (v2.z != NONE && (v.z == NONE || hash_u64_lt(v2.xy, v.xy))) { v = v2; }
    }
    // Every slot is held (written by this pass, or about to be): the next pass decides.
    if (v.z == NONE) { break; }
    // Admission against the slots no key of this pass has taken (a key this pass places may score
    // lower: that key and this one do not see each other; see the README).
    if (ADMISSION && hash_u64_lt(desired, v.xy)) { return vec2<u32>(ST_REFUSED, NONE); }
    let victim = v.z;
    // Lane 0 claims: 0 lost the claim, 1 the slot was freed meanwhile, 2 the score rose (released), 3 evict.
    var step = 0u;
    var old_key = vec2<u32>(0u);
    var old_score = vec2<u32>(0u);
    if (cg_lane() == 0u && try_claim(victim)) {
      old_key = key_at(victim);
      old_score = score_at(victim);
      if (hkv_is_free(old_key)) {
        step = 1u;
      } else if (hash_u64_lt(v.xy, old_score)) {
        // Nobody wrote the slot in this pass (its bit was clear), so this holds unless the scan
        // read a torn or stale score: then the slot was not the minimum and nothing was written.
        release(victim);
        step = 2u;
      } else {
        step = 3u;
      }
    }
    step = cg_broadcast(step, 0u);
    if (step == 0u || step == 2u) { continue; }
    if (step == 1u) {
      g_write_slot(victim, i, k, d, desired);
      return vec2<u32>(ST_INSERTED, victim);
    }
    if (EVICT) {
      var e = 0u;
      if (cg_lane() == 0u) {
        e = atomicAdd(&out[0], 1u);
        let at = OUT_HEAD + 2u * params.n + EV_WORDS * e;
        atomicStore(&out[at], old_key.x);
        atomicStore(&out[at + 1u], old_key.y);
        atomicStore(&out[at + 2u], old_score.x);
        atomicStore(&out[at + 3u], old_score.y);
        atomicStore(&out[at + 4u], victim);
      }
      e = cg_broadcast(e, 0u);
      // The same lane reads value j here and writes it in g_write_slot.
      ${v.evict ? 'for (var j = cg_lane(); j < VW; j += TILE) { ev_vals[e * VW + j] = val_load(victim, j); }' : '_ = e;'}
    }
    // Values in other windows land after the batch's last pass (the engine's copiesOnce): if the
    // victim may be a key an earlier pass of this batch placed or updated, both are listed for
    // this slot. LRU tells: this batch's scores start at its clock; other policies always may.
    if (WINDOWED && cg_lane() == 0u && (POLICY != 0u || !hash_u64_lt(old_score, clock_of(0u)))) {
      atomicStore(&out[OUT_HAZARD], 1u);
    }
    g_write_slot(victim, i, k, d, desired);
    return vec2<u32>(ST_EVICTED, victim);
  }
  return vec2<u32>(ST_BUSY, NONE);
}

${groupEntry(v.subgroups)} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, TILE);
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    var live = false;
    var k = vec2<u32>(EMPTY_LO, KEY_HI_RESERVED);
    var desired = vec2<u32>(0u);
    if (i < params.n) {
      if (LOOKUP) {
        // Without the dedupe pass the statuses were not cleared: every key is this pass's.
        var st = ST_NONE;
        if (DEDUPED) { st = atomicLoad(&out[OUT_HEAD + i]); }
        if (st == ST_NONE) {
          k = vec2<u32>(batch[2u * i], batch[2u * i + 1u]);
          if (hkv_is_reserved(k)) {
            atomicStore(&out[OUT_HEAD + i], ST_RESERVED);
          } else {
            live = true;
            desired = score_new(i);
          }
        }
      } else {
        let st = atomicLoad(&out[OUT_HEAD + i]);
        if (st == ST_PENDING || st == ST_BUSY) {
          live = true;
          k = vec2<u32>(batch[2u * i], batch[2u * i + 1u]);
          desired = score_new(i);
        }
      }
    }
    let h = hkv_hash(k);
    var result = vec2<u32>(ST_BUSY, NONE);
    ${groupQueue(
      'live',
      `let r = g_insert(cg_broadcast(i, src), g_bc2(k, src), g_bc2(h, src), g_bc2(desired, src));
      if (cg_lane() == src) { result = r; }`,
    )}
    if (live) {
      atomicStore(&out[OUT_HEAD + params.n + i], result.y);
      let placed = result.x == ST_INSERTED || result.x == ST_EVICTED || result.x == ST_UPDATED;
      atomicStore(&out[OUT_HEAD + i], select(result.x, result.x | VALUES_PENDING, WINDOWED && placed));
      if (result.x == ST_INSERTED) { atomicAdd(&wg_added, 1u); }
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    let added = atomicLoad(&wg_added);
    if (added != 0u) { atomicAdd(&bucket_meta[counters_base()], added); }
  }
}
`,
      {
        modules: [gridModule, hkvCoreModule, claimModule, scoreModule, insertGroupModule(v.subgroups)],
        constants: { ...opConstants({ ...v }), TILE: v.tile },
      },
    ),
});
