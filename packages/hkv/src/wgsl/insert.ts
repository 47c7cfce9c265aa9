import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { claimModule } from './claim';
import {
  hkvCoreModule,
  locateModule,
  MAX_ATTEMPTS,
  opConstants,
  opParams,
  scoreModule,
  sliceAccessors,
  sliceBindings,
  type ValueVariant,
  WORKGROUP_SIZE,
} from './common';

export interface InsertVariant extends ValueVariant {
  policy: number;
  hasScores: boolean;
  /** Write each evicted entry (key, score, value) to the out buffers, compacted by a counter. */
  evict: boolean;
  /** Dual-bucket mode: two candidate buckets, the less loaded while there is room, then the lower minimum. */
  dual: boolean;
}

/**
 * The inserter pass: each key the update pass left pending (or an earlier insert pass left busy)
 * takes a slot of its bucket.
 * 1. A free slot: the digest line's bytes equal to the empty digest, from the key's start word,
 *    whose key is empty or reclaimed; claim it, re-check it is free, write it.
 * 2. Else the minimum score of the unclaimed slots. Custom scores: a key scoring below it is
 *    refused (admission control; ties are admitted). Claim that slot, re-read its score and key:
 *    if the score rose above the minimum seen, release and start again (NVIDIA's re-check);
 *    otherwise report the old entry (insertAndEvict) and overwrite it.
 * A slot written by this pass keeps its claim bit until the pass ends (see claim.ts): it is written
 * at most once per pass, and everything a claimer reads (key, score, value) was written by an
 * earlier dispatch. So a key placed by this pass is evicted by a later pass, never by this one.
 * Every loop is bounded: a key still without a slot after MAX_ATTEMPTS, or whose bucket has no
 * unclaimed slot left, is reported busy and the next pass (or the host) runs it again.
 */
export const insertKernel = defineKernel({
  name: 'hkv.insert',
  workgroupSize: WORKGROUP_SIZE,
  params: opParams,
  variant: {
    dim: 1,
    slices: 1,
    sliceSlots: 128,
    deviceSlots: 128,
    policy: 0,
    hasScores: false,
    evict: false,
    dual: false,
  } as InsertVariant,
  bindings: (v: InsertVariant) => ({
    params: uniform(),
    bucket_meta: storage('read_write', 'atomic<u32>'),
    keys: storage('read_write', 'atomic<u32>'),
    scores: storage('read_write', 'atomic<u32>'),
    batch: storage('read', 'u32'),
    in_vals: storage('read', 'f32'),
    out: storage('read_write', 'atomic<u32>'),
    ...(v.evict ? { ev_vals: storage('read_write', 'f32') } : {}),
    ...sliceBindings(v.slices, 'read_write'),
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}

const MAX_ATTEMPTS: u32 = ${MAX_ATTEMPTS}u;
const EVICT: bool = ${v.evict};
${sliceAccessors(v, true)}

fn write_slot(g: u32, i: u32, k: vec2<u32>, d: u32, score: vec2<u32>) {
  for (var j = 0u; j < DIM; j++) { val_store(g, j, in_vals[i * DIM + j]); }
  set_score(g, score);
  set_key(g, k);
  set_digest(g, d);
}

/** A free slot of bucket b, claimed, or NONE. */
fn claim_free(b: u32, start: u32) -> u32 {
  for (var w = 0u; w < 32u; w++) {
    let wi = (start + w) & 31u;
    var m = hash_byte_match(digest_word(b * 32u + wi), EMPTY_DIGEST);
    while (m != 0u) {
      let g = b * BUCKET + wi * 4u + (countTrailingZeros(m) >> 3u);
      m &= m - 1u;
      if (hkv_is_free(key_at(g)) && try_claim(g)) {
        if (hkv_is_free(key_at(g))) { return g; }
        release(g);
      }
    }
  }
  return NONE;
}

/** Free slots of bucket b by their digests (a real key with the empty digest counts too: a heuristic). */
fn free_count(b: u32) -> u32 {
  var c = 0u;
  for (var w = 0u; w < 32u; w++) { c += countOneBits(hash_byte_match(digest_word(b * 32u + w), EMPTY_DIGEST)); }
  return c;
}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let st = atomicLoad(&out[OUT_HEAD + i]);
    if (st != ST_PENDING && st != ST_BUSY) { continue; }
    let k = vec2<u32>(batch[2u * i], batch[2u * i + 1u]);
    let h = hkv_hash(k);
    let b1 = hkv_bucket(h, params.mask);
    let b2 = select(b1, hkv_bucket2(h, params.mask, b1), DUAL);
    let d = hkv_key_digest(h);
    let start = hkv_start_word(h);
    let desired = score_new(i);
    var result = ST_BUSY;
    var placed = NONE;
    for (var attempt = 0u; attempt < MAX_ATTEMPTS; attempt++) {
      var first = b1;
      var second = b2;
      if (DUAL && free_count(b2) > free_count(b1)) {
        first = b2;
        second = b1;
      }
      var free = claim_free(first, start);
      if (DUAL && free == NONE) { free = claim_free(second, start); }
      if (free != NONE) {
        write_slot(free, i, k, d, desired);
        atomicAdd(&bucket_meta[counters_base()], 1u);
        result = ST_INSERTED;
        placed = free;
        break;
      }
      // The bucket is full (both are): the minimum score among the slots no one holds.
      var lo = vec2<u32>(0xffffffffu, 0xffffffffu);
      var victim = NONE;
      for (var which = 0u; which < select(1u, 2u, DUAL); which++) {
        let b = select(b1, b2, which == 1u);
        for (var q = 0u; q < 4u; q++) {
          let claims = atomicLoad(&bucket_meta[lock_base() + b * 4u + ((start / 8u + q) & 3u)]);
          for (var r = 0u; r < 32u; r++) {
            let s = ((start / 8u + q) & 3u) * 32u + r;
            if ((claims & (1u << r)) != 0u) { continue; }
            let g = b * BUCKET + s;
            let sc = score_at(g);
            if (victim == NONE || hash_u64_lt(sc, lo)) { lo = sc; victim = g; }
          }
        }
      }
      // Every slot is held (written by this pass, or about to be): the next pass decides.
      if (victim == NONE) { break; }
      // Admission against the slots no key of this pass has taken (a key this pass places may score
      // lower: that key and this one do not see each other; see the README).
      if (ADMISSION && hash_u64_lt(desired, lo)) { result = ST_REFUSED; break; }
      if (!try_claim(victim)) { continue; }
      let old_key = key_at(victim);
      let old_score = score_at(victim);
      if (hkv_is_free(old_key)) {
        // Freed meanwhile (a reclaimed slot whose digest the scan missed): take it as free.
        write_slot(victim, i, k, d, desired);
        atomicAdd(&bucket_meta[counters_base()], 1u);
        result = ST_INSERTED;
        placed = victim;
        break;
      }
      // Nobody wrote the slot in this pass (its bit was clear), so this holds unless the scan read a
      // torn or stale score: then the slot was not the minimum, and nothing was written: release.
      if (hash_u64_lt(lo, old_score)) { release(victim); continue; }
      if (EVICT) {
        let e = atomicAdd(&out[0], 1u);
        let at = OUT_HEAD + 2u * params.n + EV_WORDS * e;
        atomicStore(&out[at], old_key.x);
        atomicStore(&out[at + 1u], old_key.y);
        atomicStore(&out[at + 2u], old_score.x);
        atomicStore(&out[at + 3u], old_score.y);
        atomicStore(&out[at + 4u], victim);
        ${v.evict ? 'for (var j = 0u; j < DIM; j++) { ev_vals[e * DIM + j] = val_load(victim, j); }' : ''}
      }
      write_slot(victim, i, k, d, desired);
      result = ST_EVICTED;
      placed = victim;
      break;
    }
    atomicStore(&out[OUT_HEAD + params.n + i], placed);
    atomicStore(&out[OUT_HEAD + i], result);
  }
}
`,
      {
        modules: [gridModule, hkvCoreModule, claimModule, scoreModule, locateModule],
        constants: opConstants({ ...v }),
      },
    ),
});
