import { unrolled, type WgslModule } from '@gpuhash/kernels';
import { cooperativeVariant } from './cooperative-variant';
import { locksModule } from './locks';
import { stashModule } from './stash';
import { wabcModule } from './wabc';
import { wcmeModule } from './wcme';

/** Slots a lane loads before it compares any: a whole bucket at 4 lanes a group. */
const PREFETCH = 8;
const unroll = (line: (u: number) => string) => unrolled(PREFETCH, line);

/** Hard bound of `max_evict` (private path arrays are this long, plus one). */
export const MAX_EVICTIONS = 16;

/**
 * Steps 3 and 4 of an insert (and steps 1 and 2 again, under the locks): the locked path.
 *
 * The op locks both candidate buckets, so every locked op on one key is serialised and a key
 * never lands twice. It looks for the key, then a free slot in either bucket; then it walks a
 * cuckoo path: from a full bucket to the alternate bucket of one of its keys, locking each bucket
 * it enters, until some key there has room in its alternate bucket (the group checks all 32 keys,
 * cg_size() at a time). Only then does it move anything, from the far end back: each victim is
 * copied into its alternate bucket before its old slot is overwritten, so no key is ever homeless, and a failed
 * walk changes nothing. Without a path the key goes to its stash line; with the line full it is
 * reported pending. Locks are only ever tried: a lock held by another group releases everything
 * and the op retries from the kernel's main loop (never a spin inside this function). What the
 * leader writes under locks is settled (read back) before it unlocks.
 * Needs `slots`, `masks` (free masks, then locks at lock_base), `params`, tallies.
 */
export function cuckooModule(subgroups: boolean): WgslModule {
  return cooperativeVariant(
    'hive.cuckoo',
    subgroups,
    /* wgsl */ `
const R_RETRY: u32 = 0u;
const R_EXISTED: u32 = 1u;
const R_INSERTED: u32 = 2u;
const R_STASHED: u32 = 3u;
const R_FAILED: u32 = 4u;
const R_STAYED: u32 = 5u;
const MAX_PATH: u32 = ${MAX_EVICTIONS + 1}u;

/** Unlocks path[1..=depth] (path[0] is a candidate bucket, locked by the caller). */
fn hv_unlock_path(path: ptr<function, array<u32, MAX_PATH>>, depth: u32, leader: u32) {
  for (var j = 1u; j <= depth; j++) { hv_unlock((*path)[j], leader); }
}

/** The r-th set lane of a lane mask. */
fn hv_nth_lane(m: vec4<u32>, r: u32) -> u32 {
  var left = r;
  for (var w = 0u; w < 4u; w++) {
    let c = countOneBits(m[w]);
    if (left < c) { return w * 32u + hv_nth_bit(m[w], left); }
    left -= c;
  }
  return NONE;
}

fn hv_in_path(path: ptr<function, array<u32, MAX_PATH>>, depth: u32, b: u32) -> bool {
  for (var j = 0u; j <= depth; j++) {
    if ((*path)[j] == b) { return true; }
  }
  return false;
}

/**
 * Inserts (k, v) into candidate buckets c1 (its first) and c2 under their locks; all lanes call
 * with the same arguments. Both locks are tried in one round trip (a taken one releases the
 * other: locks are only ever tried, so no order is needed against deadlock), and the first
 * bucket's lock word brings its overflow bit along.
 */
fn hv_locked_insert(k: u32, v: u32, assign: bool, c1: u32, c2: u32, leader: u32, drain: bool, attempt: u32) -> u32 {
  var held = 0u;
  if (cg_lane() == leader) {
    let w1 = atomicOr(&masks[params.lock_base + c1], LOCK_BIT);
    var w2 = 0u;
    if (c2 != c1) { w2 = atomicOr(&masks[params.lock_base + c2], LOCK_BIT); }
    let ok1 = (w1 & LOCK_BIT) == 0u;
    let ok2 = (w2 & LOCK_BIT) == 0u;
    if (ok1 && ok2) {
      // Held, plus the first bucket's overflow and stash bits.
      held = 1u | (w1 & (OVERFLOW_BIT | STASH_BIT));
      count(T_LOCK_ACQUISITIONS, 1u);
    } else {
      if (ok1) { atomicAnd(&masks[params.lock_base + c1], ~LOCK_BIT); }
      if (ok2 && c2 != c1) { atomicAnd(&masks[params.lock_base + c2], ~LOCK_BIT); }
      count(T_LOCK_CONFLICTS, 1u);
    }
  }
  held = cg_broadcast(held, leader);
  if (held == 0u) { return R_RETRY; }
  let r = hv_insert_held(k, v, assign, c1, c2, leader, drain, attempt, (held & OVERFLOW_BIT) != 0u, (held & STASH_BIT) != 0u);
  hv_unlock(c1, leader);
  if (c2 != c1) { hv_unlock(c2, leader); }
  return r;
}

fn hv_insert_held(k: u32, v: u32, assign: bool, c1: u32, c2: u32, leader: u32, drain: bool, attempt: u32, spilled: bool, stashed: bool) -> u32 {
  let me = cg_lane() == leader;
  // Steps 1 and 2 again from one read of both buckets (and of the stash line, when the first
  // bucket has its stash bit: every store of k in the stash sets it, under k's locks). With both
  // locks held and pass A over, a slot is free exactly when its key word is EMPTY.
  let line = hv_stash_bucket(k);
  let look_stash = stashed && !drain;
  var m1 = 0u;
  var m2 = 0u;
  var ms = 0u;
  var e1 = 0u;
  var e2 = 0u;
  // A lane's loads first, then the ballots: one round trip for the buckets, not one per step.
  for (var s0 = 0u; s0 < cg_steps(32u); s0 += ${PREFETCH}u) {
${unroll(
  (u) => `    let sl${u} = (s0 + ${u}u) * cg_size() + cg_lane();
    var k1_${u} = TOMBSTONE;
    var k2_${u} = TOMBSTONE;
    var ks_${u} = TOMBSTONE;
    if (sl${u} < 32u) {
      k1_${u} = atomicLoad(&slots[hv_key_word(c1, sl${u})]);
      if (c2 != c1) { k2_${u} = atomicLoad(&slots[hv_key_word(c2, sl${u})]); }
      if (look_stash) { ks_${u} = atomicLoad(&slots[hv_key_word(line, sl${u})]); }
    }`,
)}
${unroll(
  (u) => `    m1 |= hv_row_ballot(k1_${u} == k, s0 + ${u}u);
    m2 |= hv_row_ballot(k2_${u} == k, s0 + ${u}u);
    ms |= hv_row_ballot(ks_${u} == k, s0 + ${u}u);
    e1 |= hv_row_ballot(k1_${u} == EMPTY, s0 + ${u}u);
    e2 |= hv_row_ballot(k2_${u} == EMPTY, s0 + ${u}u);`,
)}
  }
  // Step 1 again: the key may have arrived since the lock-free pass looked (a drained stash key is known absent).
  if (!drain) {
    var at = NONE;
    if (m1 != 0u) {
      at = c1 * 32u + firstTrailingBit(m1);
    } else if (m2 != 0u && spilled) {
      at = c2 * 32u + firstTrailingBit(m2);
    } else if (ms != 0u) {
      at = line * 32u + firstTrailingBit(ms);
    }
    if (at != NONE) {
      if (assign && me) {
        atomicStore(&slots[hv_vw(at)], v);
        hv_settle(at, k, v);
      }
      return R_EXISTED;
    }
  }
  // Step 2 again: erases and freed claims may have made room. The claim is the atomic itself;
  // should the free mask disagree with the scan, the usual WABC read decides.
  for (var j = 0u; j < 2u; j++) {
    if (j == 1u && c2 == c1) { break; }
    let c = select(c1, c2, j == 1u);
    let e = select(e1, e2, j == 1u);
    if (e == 0u) { continue; }
    var got = 0u;
    if (me) {
      let take = hv_pick_slot(e, hv_home(k));
      got = take & atomicAnd(&masks[c], ~take);
    }
    got = cg_broadcast(got, leader);
    if (got == 0u) { got = hv_wabc(c, 1u, leader).x; }
    if (got != 0u) {
      if (me) { hv_store_locked(c * 32u + firstTrailingBit(got), k, v); }
      return R_INSERTED;
    }
  }
  // Step 3: bounded cuckoo eviction.
  var path: array<u32, MAX_PATH>;
  var victim: array<u32, MAX_PATH>;
  path[0] = select(c1, c2, (attempt & 1u) == 1u);
  var depth = 0u;
  loop {
    if (depth >= params.max_evict) { break; }
    let c = path[depth];
    var movable = 0u;
    // Victims already away from their home first: moving them costs their finds nothing.
    var away = 0u;
    var cand = NONE;
    var cand_alt = 0u;
    var cand_free = 0u;
    var cand_home = 0u;
    var cand_key = EMPTY;
    for (var step = 0u; step < cg_steps(32u); step++) {
      let slot = step * cg_size() + cg_lane();
      var alt = NONE;
      var can = false;
      var alt_free = 0u;
      var is_away = false;
      var home = 0u;
      var kv = TOMBSTONE;
      if (slot < 32u) {
        kv = atomicLoad(&slots[hv_key_word(c, slot)]);
        if (kv < TOMBSTONE) {
          alt = hv_other(kv, c);
          can = alt != c && alt != c1 && alt != c2 && !hv_in_path(&path, depth, alt);
          if (can) { alt_free = atomicLoad(&masks[alt]); }
          home = hv_home(kv);
          is_away = hv_b1(kv) != c || slot / HOME_SLOTS != home;
        }
      }
      let roomy = alt_free != 0u;
      movable |= hv_row_ballot(can, step);
      away |= hv_row_ballot(can && is_away, step);
      var rm = cg_ballot(roomy && is_away);
      if (cg_mask_empty(rm)) { rm = cg_ballot(roomy); }
      if (!cg_mask_empty(rm)) {
        // A pseudo-random roomy lane, so ops that collided once do not collide the same way again.
        let r = hash_fmix32(k ^ attempt) % cg_popcount(rm);
        let pickw = hv_nth_lane(rm, r);
        cand = step * cg_size() + pickw;
        cand_alt = cg_broadcast(alt, pickw);
        cand_free = cg_broadcast(alt_free, pickw);
        cand_home = cg_broadcast(home, pickw);
        cand_key = cg_broadcast(kv, pickw);
        break;
      }
    }
    if (cand != NONE) {
      // The victim's value, read while the lock is tried (its bucket is locked already).
      var cand_value = 0u;
      if (me) { cand_value = atomicLoad(&slots[hv_vw(c * 32u + cand)]); }
      if (!hv_lock(cand_alt, leader)) {
        hv_unlock_path(&path, depth, leader);
        return R_RETRY;
      }
      // Claim the slot the hint saw free with the atomic itself; if it went meanwhile, WABC decides.
      var got = 0u;
      if (me) {
        let take = hv_pick_slot(cand_free, cand_home);
        got = take & atomicAnd(&masks[cand_alt], ~take);
      }
      got = cg_broadcast(got, leader);
      if (got == 0u) { got = hv_wabc(cand_alt, 1u, leader).x; }
      if (got != 0u) {
        victim[depth] = cand;
        if (me) {
          let dst = cand_alt * 32u + firstTrailingBit(got);
          if (depth == 0u) {
            // One move: both stores, then one settle for both. Every bucket written is locked and
            // no find runs in this pass, so only the unlock needs them visible.
            let at = c * 32u + cand;
            hv_store_pair(dst, cand_key, cand_value);
            hv_placed(cand_key, dst);
            hv_store_pair(at, k, v);
            hv_placed(k, at);
            hv_settle2(dst, cand_key, cand_value, at, k, v);
          } else {
            // From the far end back: every key is copied to its new slot before its old one is reused.
            hv_move_locked(c * 32u + cand, dst);
            for (var j = depth; j > 0u; j--) {
              hv_move_locked(path[j - 1u] * 32u + victim[j - 1u], path[j] * 32u + victim[j]);
            }
            hv_store_locked(path[0] * 32u + victim[0], k, v);
          }
          count(T_EVICTIONS, depth + 1u);
        }
        hv_unlock(cand_alt, leader);
        hv_unlock_path(&path, depth, leader);
        return R_INSERTED;
      }
      // Filled by another group before we held its lock: walk on instead.
      hv_unlock(cand_alt, leader);
    }
    if (movable == 0u) { break; }
    let pool = select(movable, away, away != 0u);
    let pick = hv_nth_bit(pool, hash_fmix32(k ^ (attempt * 0x9e3779b9u) ^ (depth << 24u)) % countOneBits(pool));
    var next = 0u;
    if (me) { next = hv_other(atomicLoad(&slots[hv_key_word(c, pick)]), c); }
    next = cg_broadcast(next, leader);
    if (!hv_lock(next, leader)) {
      hv_unlock_path(&path, depth, leader);
      return R_RETRY;
    }
    victim[depth] = pick;
    depth += 1u;
    path[depth] = next;
  }
  hv_unlock_path(&path, depth, leader);
  if (drain) { return R_STAYED; }
  // Step 4: the overflow stash.
  if (hv_stash_put(k, v, leader)) { return R_STASHED; }
  return R_FAILED;
}
`,
    {
      requires: [wcmeModule(subgroups), wabcModule(subgroups), locksModule(subgroups), stashModule(subgroups)],
      needs: ['slots', 'masks', 'params'],
    },
  );
}
