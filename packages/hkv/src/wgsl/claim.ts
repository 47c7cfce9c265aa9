import { wgslModule } from '@gpuhash/kernels';
import { hkvCoreModule } from './common';

/**
 * Slot claims for kernels that change slots (insert, erase): one claim bit per slot, after the
 * digest lines in `bucket_meta` ([digests: B * 32][claim bits: B * 4][counters: 4]). A slot is held by the
 * invocation whose atomicOr set its bit. **A holder that writes the slot keeps the bit until the end
 * of the dispatch** (the host clears every claim word between dispatches, `clearBuffer`): so each
 * slot has at most one writer per dispatch, and whoever claims a slot reads words last written by an
 * earlier dispatch, which a dispatch boundary makes visible. WGSL atomics are relaxed: a released
 * bit would not order the holder's key, score and value stores before the next holder's loads (nor
 * its plain value stores before the next holder's), so the protocol never relies on it. A holder
 * that writes nothing (its re-check failed) may release. No invocation waits for a bit: a held
 * slot is skipped or retried a bounded number of times. The kernel declares `bucket_meta`, `keys`
 * and `scores` as arrays of `atomic<u32>` and `params.mask`.
 */
export const claimModule = wgslModule(
  'hkv.claim',
  /* wgsl */ `
fn lock_base() -> u32 { return (params.mask + 1u) * 32u; }
fn counters_base() -> u32 { return (params.mask + 1u) * 36u; }
fn try_claim(g: u32) -> bool {
  let bit = 1u << (g & 31u);
  return (atomicOr(&bucket_meta[lock_base() + (g >> 5u)], bit) & bit) == 0u;
}
fn release(g: u32) { atomicAnd(&bucket_meta[lock_base() + (g >> 5u)], ~(1u << (g & 31u))); }
fn is_claimed(g: u32) -> bool { return (atomicLoad(&bucket_meta[lock_base() + (g >> 5u)]) & (1u << (g & 31u))) != 0u; }
fn digest_word(i: u32) -> u32 { return atomicLoad(&bucket_meta[i]); }
fn key_at(g: u32) -> vec2<u32> { return vec2<u32>(atomicLoad(&keys[2u * g]), atomicLoad(&keys[2u * g + 1u])); }
fn score_at(g: u32) -> vec2<u32> { return vec2<u32>(atomicLoad(&scores[2u * g]), atomicLoad(&scores[2u * g + 1u])); }
fn set_key(g: u32, k: vec2<u32>) { atomicStore(&keys[2u * g], k.x); atomicStore(&keys[2u * g + 1u], k.y); }
fn set_score(g: u32, s: vec2<u32>) { atomicStore(&scores[2u * g], s.x); atomicStore(&scores[2u * g + 1u], s.y); }
/** Sets slot g's digest byte (the other three bytes of the word belong to other slots: atomics). */
fn set_digest(g: u32, d: u32) {
  let w = g >> 2u;
  let sh = (g & 3u) * 8u;
  atomicAnd(&bucket_meta[w], ~(0xffu << sh));
  atomicOr(&bucket_meta[w], d << sh);
}
/** Empties a held slot into a reclaimed one (the erase of a key); the holder keeps the bit. */
fn reclaim(g: u32) {
  set_key(g, vec2<u32>(RECLAIM_LO, KEY_HI_RESERVED));
  set_score(g, vec2<u32>(0u, 0u));
  set_digest(g, EMPTY_DIGEST);
}
`,
  { requires: [hkvCoreModule], needs: ['bucket_meta', 'keys', 'scores', 'params'] },
);

/**
 * \`count_erased(n, lid)\`: adds an invocation's erased entries to the cache's size and to
 * \`out[0]\` with one global atomic per workgroup (an atomic per entry on one word ran one after
 * another). Called once by every invocation of the workgroup, after its loop (it has a barrier).
 */
export const erasedCountModule = wgslModule(
  'hkv.erased-count',
  /* wgsl */ `
var<workgroup> wg_erased: atomic<u32>;
fn count_erased(n: u32, lid: u32) {
  if (n != 0u) { atomicAdd(&wg_erased, n); }
  workgroupBarrier();
  if (lid == 0u) {
    let c = atomicLoad(&wg_erased);
    if (c != 0u) {
      atomicSub(&bucket_meta[counters_base()], c);
      atomicAdd(&out[0], c);
    }
  }
}
`,
  { requires: [claimModule], needs: ['bucket_meta', 'out'] },
);
