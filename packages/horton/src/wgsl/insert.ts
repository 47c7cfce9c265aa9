import { defineKernel, storage, uniform } from '@gpuhash/core';
import {
  chunkLoop,
  composeWgsl,
  entryPoint,
  failureListModule,
  gridModule,
  gridStrideLoop,
  wgslModule,
  workgroupAppendModule,
  workgroupTalliesModule,
} from '@gpuhash/kernels';
import { bucketModule } from './common';
import { hortonParams, WORKGROUP_SIZE } from './params';

const entry = entryPoint(WORKGROUP_SIZE);
const atomicsRW = storage('read_write', 'atomic<u32>');
const words = storage('read', 'u32');

/** Counters: [0] live keys, [1] Type B buckets. */
export const talliesModule = workgroupTalliesModule(
  'horton.tallies',
  {
    added: 'atomicAdd(&counters[0], v);',
    erased: 'atomicSub(&counters[0], v);',
    toB: 'atomicAdd(&counters[1], v);',
    toA: 'atomicSub(&counters[1], v);',
    pushed: 'atomicAdd(&counters[2], v);',
  },
  { needs: ['counters'] },
);

/** Results of one insert attempt. */
export const INSERTED = 0;
export const EXISTED = 1;
export const RETRY = 2;
export const FULL = 3;
/** The fast pass's answer for a key that found slots 0..6 of its Type A primary bucket taken. */
export const SPILL = 4;

/**
 * Bucket ownership for one insert round (`locks`: one stamp per bucket), by deterministic
 * reservation: a round is two dispatches over the same queued keys. In the planning pass (PLAN)
 * each key runs its insert without writing and raises the stamp of every bucket it would touch
 * to its own stamp (atomicMax); in the executing pass a key runs again and owns a bucket only if
 * its stamp is still there (it had the highest). Stamps are (epoch, scrambled queue position):
 * unique within a round, larger than every earlier round's. A key that does not own a bucket it
 * needs goes to the next round; nothing spins, so no invocation waits on another, and the
 * highest stamp of a round always wins every bucket it reserved (no livelock).
 *
 * The invariants that make it correct under WGSL's relaxed atomics:
 * - a bucket is written only by its owner, and at most one key owns a bucket per round: what an
 *   owner reads of its buckets is the state at the start of the round;
 * - a key is only moved (or added) by the owner of its primary bucket (BCHT mode: of both its
 *   buckets), so a key's presence is stable while its primary bucket is owned;
 * - every path asks for all its buckets before its first write, so the executing pass never needs
 *   a bucket the planning pass did not reserve, unless what it read of unowned buckets changed
 *   meanwhile (then it does not own it, and retries).
 */
export const ownershipModule = wgslModule(
  'horton.ownership',
  /* wgsl */ `
const MAX_OWNED: u32 = 32u;
var<private> owned: array<u32, 32>;
var<private> n_owned: u32;
var<private> stamp: u32;
// The key's search needed more buckets than MAX_OWNED: it counts as finding no room (a strike),
// not as contended (it would need as many next round).
var<private> overflowed: bool;
fn begin_key(j: u32) {
  n_owned = 0u;
  overflowed = false;
  let prio_mask = (1u << params.prio_bits) - 1u;
  stamp = (params.epoch << params.prio_bits) | ((j * 0x9e3779b1u + params.epoch * 0x632be5abu) & prio_mask);
}
fn own(b: u32) -> bool {
  for (var i = 0u; i < n_owned; i++) { if (owned[i] == b) { return true; } }
  if (n_owned >= MAX_OWNED) {
    overflowed = true;
    return false;
  }
  if (PLAN) { atomicMax(&locks[b], stamp); }
  else if (atomicLoad(&locks[b]) != stamp) { return false; }
  owned[n_owned] = b;
  n_owned += 1u;
  return true;
}
`,
  { needs: ['locks', 'params', 'PLAN'] },
);

/** The lock-free first pass of a Horton insert batch: present keys and free primary slots (see the README). */
export const hortonFastModule = wgslModule(
  'horton.fast',
  /* wgsl */ `
const INSERTED: u32 = ${INSERTED}u;
const EXISTED: u32 = ${EXISTED}u;
const RETRY: u32 = ${RETRY}u;
const FULL: u32 = ${FULL}u;
const SPILL: u32 = ${SPILL}u;

const GAVE_UP: u32 = 5u;
fn settled(r: u32) -> u32 { return select(r, RETRY, r == GAVE_UP); }

// BCHT load balancing: whether key goes to its first bucket, given the free slots of both.
fn first_emptier(key: u32, f1: u32, f2: u32) -> bool { return f1 > f2 || (f1 == f2 && !tie_to_second(key)); }

// The key's slot in the remap bucket of its entry in Type B bucket x, as (bucket, slot), or NONE.
fn entry_slot(x: u32, t: u32, key: u32) -> vec2<u32> {
  let e = entry_of(rea_of(x), t);
  if (e == 0u) { return vec2<u32>(NONE, NONE); }
  let y = secondary_of(x, t, e);
  return vec2<u32>(y, slot_of(y, key));
}

// The key's slot in its remap bucket (x Type B, entry set), as (bucket, slot), or NONE.
fn remapped_slot(x: u32, t: u32, key: u32) -> vec2<u32> {
  if (!is_type_b(x)) { return vec2<u32>(NONE, NONE); }
  return entry_slot(x, t, key);
}

// Claims for key, in slot order, the first of the slots in mask free (those a read of bucket b
// found free) still free: INSERTED, EXISTED (another copy of the key took it first), RETRY (all
// taken) or GAVE_UP (spurious compare-exchange failures used the budget). During an insert pass a
// slot only goes from free to taken, so a slot read as taken is not tried; two copies of one key
// both try every slot either of them can take, in one order, so they meet at the first and never
// both claim one. Only compare-exchanges on slots that looked free: each costs an atomic round trip.
fn claim_mask(b: u32, free: u32, key: u32, value: u32, assign: bool) -> u32 {
  var m = free;
  for (var budget = 0u; budget < 64u && m != 0u; budget++) {
    let s = countTrailingZeros(m);
    let c = atomicCompareExchangeWeak(&buckets[16u * b + 2u * s], EMPTY, key);
    if (c.exchanged) {
      atomicStore(&buckets[16u * b + 2u * s + 1u], value);
      return INSERTED;
    }
    if (c.old_value == key) {
      if (assign) { store_value(b, s, value); }
      return EXISTED;
    }
    if (c.old_value != EMPTY) { m &= m - 1u; } // taken by another key (a spurious failure tries again)
  }
  return select(GAVE_UP, RETRY, m == 0u);
}

// One read of bucket b's keys: (the slot holding key, or NONE; the mask of free slots).
fn read_bucket(b: u32, key: u32) -> vec2<u32> {
  var free = 0u;
  for (var s = 0u; s < 8u; s++) {
    let k = key_at(b, s);
    if (k == key) { return vec2<u32>(s, 0u); }
    if (k == EMPTY) { free |= 1u << s; }
  }
  return vec2<u32>(NONE, free);
}

// Claims the first free slot of b for key (claim_mask over one read of b): INSERTED, EXISTED or
// RETRY (no free slot, or too many spurious failures).
fn claim_in(b: u32, key: u32, value: u32, assign: bool) -> u32 {
  let read = read_bucket(b, key);
  if (read.x != NONE) {
    if (assign) { store_value(b, read.x, value); }
    return EXISTED;
  }
  if (read.y == 0u) { return RETRY; }
  return settled(claim_mask(b, read.y, key, value, assign));
}

// The function (1..FUNCTIONS) of entry (x, t) whose bucket has the most free slots, at least need,
// other than avoid and function skip; 0 when none has room.
// Every candidate's room is read before any is compared, so that the reads can overlap (builds
// to 0.95 of 2^27 slots about 8% faster on an H100; 0.9 the same).
fn best_candidate(x: u32, t: u32, need: u32, avoid: u32, skip: u32) -> u32 {
  var room: array<u32, FUNCTIONS>;
  for (var i = 0u; i < FUNCTIONS; i++) { room[i] = room_of(secondary_of(x, t, i + 1u)); }
  var best = 0u;
  var best_free = 0u;
  for (var i = 1u; i <= FUNCTIONS; i++) {
    if (i == skip) { continue; }
    let w = secondary_of(x, t, i);
    if (w == x || w == avoid) { continue; }
    let f = room[i - 1u];
    if (f >= need && f > best_free) { best = i; best_free = f; }
  }
  return best;
}

// BCHT: present in either bucket: EXISTED; else the key's tie bucket claimed when it is at least as
// empty as the other; else RETRY (the second-bucket pass or the rounds place it). Keys are only
// added here into their tie buckets, so copies of one key never land in two buckets, and since the
// tie bit is a fair coin apart from both buckets, each function takes half the keys. The tie bucket
// is read first: buckets fill while a key reads them, so the one read later looks fuller (reading
// the first bucket first sent a third of the keys more to it on a GPU).
fn fast_insert_bcht(key: u32, value: u32, assign: bool) -> u32 {
  let pair = bcht_pair(key);
  let tie = pair.x;
  let other = pair.y;
  for (var c = 0u; c < 2u; c++) {
    let b = select(tie, other, c == 1u);
    let s = slot_of(b, key);
    if (s != NONE) {
      if (assign) { store_value(b, s, value); }
      return EXISTED;
    }
  }
  let ft = free_count(tie);
  if (other != tie && free_count(other) > ft) { return RETRY; }
  return claim_in(tie, key, value, assign);
}
`,
  { requires: [bucketModule], needs: ['buckets', 'room_of'] },
);

/** Room in a bucket, read from its keys: what best_candidate compares, exactly. */
export const exactRoomModule = wgslModule('horton.room-exact', 'fn room_of(w: u32) -> u32 { return free_count(w); }', {
  requires: [bucketModule],
});

/**
 * Room in a bucket from the bulk build's hints (a byte per bucket, four a word of \`hints\`): exact
 * as the build ends, and every claim after it takes one (take_room), so it stays exact but for
 * claims in flight. Reading 7 hint bytes (an array the L2 cache holds) instead of 56 key words
 * is what makes the least-loaded choice cheap.
 */
export const hintedRoomModule = wgslModule(
  'horton.room-hinted',
  /* wgsl */ `
fn room_of(w: u32) -> u32 { return (atomicLoad(&hints[w / 4u]) >> (8u * (w % 4u))) & 0xffu; }
fn take_room(w: u32) { atomicSub(&hints[w / 4u], 1u << (8u * (w % 4u))); }
// Bucket w's room byte set to f: in an insert round only w's owner writes it, so a load and an
// add (or sub) of the difference keep the other three bytes of the word intact.
fn set_room(w: u32, f: u32) {
  let shift = 8u * (w % 4u);
  let old = (atomicLoad(&hints[w / 4u]) >> shift) & 0xffu;
  if (old > f) { atomicSub(&hints[w / 4u], (old - f) << shift); }
  if (old < f) { atomicAdd(&hints[w / 4u], (f - old) << shift); }
}
`,
  { needs: ['hints'] },
);

/** The fast pass's Horton insert: a key placed only in its primary bucket's slots 0..6 (see spill.ts). */
export const hortonPrimaryModule = wgslModule(
  'horton.fast-primary',
  /* wgsl */ `
// Horton's fast insert, from one read of the primary bucket x: present (in x or its remap
// bucket): EXISTED; else the first free slot among slots 0..6 claimed: INSERTED. When slots 0..6
// are all taken and slot 7 of a Type A bucket is still free, the key SPILLs: it counts itself in
// spill[x] and the spill passes decide between slot 7 and making x Type B (see spill.ts). Slot 7
// is left to them, so the fast pass never fills a slot that a conversion would have to empty.
// Else RETRY: the locked rounds take it. Keys are only added here, into primary slots.
fn fast_insert(key: u32, value: u32, assign: bool) -> u32 {
  let x = primary_of(key);
  let read = read_bucket(x, key);
  if (read.x != NONE) {
    if (assign) { store_value(x, read.x, value); }
    return EXISTED;
  }
  let free = read.y;
  let k7 = key_at(x, 7u);
  if (k7 == REMAP) {
    let r = entry_slot(x, tag_of(key), key);
    if (r.y != NONE) {
      if (assign) { store_value(r.x, r.y, value); }
      return EXISTED;
    }
  }
  var r = RETRY;
  if ((free & 0x7fu) != 0u) { r = claim_mask(x, free & 0x7fu, key, value, assign); }
  if (r == RETRY && k7 == EMPTY) {
    atomicAdd(&spill[x], 1u);
    return SPILL;
  }
  return settled(r);
}
`,
  { requires: [hortonFastModule], needs: ['buckets', 'spill'] },
);

/** The locked insert of one key, Horton and BCHT modes (see the README for the algorithm). */
const lockedInsertSource = /* wgsl */ `
const RETRY_SLOT: u32 = 0xfffffffeu;

// Moves the group of keys (slot mask group) of bucket b that share entry (p, tg) to another
// secondary bucket of that entry. The first freed slot, NONE (no room), or RETRY_SLOT.
fn relocate_group(b: u32, p: u32, tg: u32, group: u32) -> u32 {
  if (!own(p)) { return RETRY_SLOT; }
  let rea = rea_of(p);
  let e = entry_of(rea, tg);
  if (e == 0u || secondary_of(p, tg, e) != b) { return NONE; }
  let need = countOneBits(group);
  let i = best_candidate(p, tg, need, b, e);
  if (i == 0u) { return NONE; }
  let w = secondary_of(p, tg, i);
  if (!own(w)) { return RETRY_SLOT; }
  if (free_count(w) < need) { return NONE; }
  var first = NONE;
  for (var s = 0u; s < 8u; s++) {
    if ((group & (1u << s)) == 0u) { continue; }
    let f = free_slot(w);
    put(w, f, key_at(b, s), value_at(b, s));
    clear_slot(b, s);
    if (first == NONE) { first = s; }
  }
  set_rea(p, with_entry(rea, tg, i));
  return first;
}

// Moves out of owned bucket b one group of secondary keys that shares an entry (never the group of
// entry (ex_p, ex_t), nor one with a slot in skip). The group's slot mask, 0 (none can move), or
// RETRY_SLOT.
fn evict_group(b: u32, ex_p: u32, ex_t: u32, skip: u32) -> u32 {
  var seen = skip;
  for (var s = 0u; s < 8u; s++) {
    if ((seen & (1u << s)) != 0u) { continue; }
    let k = key_at(b, s);
    if (is_reserved(k)) { continue; }
    let p = primary_of(k);
    if (p == b) { continue; }
    let tg = tag_of(k);
    var group = 0u;
    for (var s2 = s; s2 < 8u; s2++) {
      let k2 = key_at(b, s2);
      if (!is_reserved(k2) && primary_of(k2) == p && tag_of(k2) == tg) { group |= 1u << s2; }
    }
    seen |= group;
    if (p == ex_p && tg == ex_t) { continue; }
    let r = relocate_group(b, p, tg, group);
    if (r == RETRY_SLOT) { return RETRY_SLOT; }
    if (r != NONE) { return group; }
  }
  return 0u;
}

// Frees a slot of owned bucket b by moving out a group of secondary keys (never the group of
// entry (ex_p, ex_t)). The freed slot (the group's first), NONE, or RETRY_SLOT.
fn evict_secondary(b: u32, ex_p: u32, ex_t: u32) -> u32 {
  let g = evict_group(b, ex_p, ex_t, 0u);
  if (g == RETRY_SLOT) { return RETRY_SLOT; }
  if (g == 0u) { return NONE; }
  return countTrailingZeros(g);
}

// A Type A bucket x that is full and whose secondary keys cannot move out becomes Type B: two of
// its primary keys (the new key among the candidates, when it is a primary key of x) leave, each
// to the least-loaded secondary bucket of its tag, freeing the last slot for the remap entries.
// Leavers with one tag share one bucket. Tried in order: the new key and slot 7's key first
// (fewest moves). A secondary key converts a full candidate bucket this way too: it stays there.
var<private> cv_key: array<u32, 9>;
var<private> cv_tag: array<u32, 9>;
var<private> cv_fn: array<u32, 9>;
fn convert(x: u32, key: u32, value: u32) -> u32 {
  for (var a = 0u; a < 9u; a++) {
    let k = select(key_at(x, a), key, a == 8u);
    cv_key[a] = k;
    cv_tag[a] = tag_of(k);
    cv_fn[a] = 0u;
    if (primary_of(k) == x) { cv_fn[a] = best_candidate(x, cv_tag[a], 1u, x, 0u); }
  }
  var la = NONE;
  var lb = NONE;
  var fa = 0u;
  var fb = 0u;
  for (var ia = 0u; ia < 9u && la == NONE; ia++) {
    let a = 8u - ia; // 8 (the new key), 7, 6, ..., 0
    if (cv_fn[a] == 0u) { continue; }
    for (var ib = ia + 1u; ib < 9u; ib++) {
      let b = 8u - ib;
      if (cv_fn[b] == 0u) { continue; }
      var f1 = cv_fn[a];
      var f2 = cv_fn[b];
      if (cv_tag[a] == cv_tag[b]) {
        f1 = best_candidate(x, cv_tag[a], 2u, x, 0u);
        f2 = f1;
        if (f1 == 0u) { continue; }
      } else if (secondary_of(x, cv_tag[a], f1) == secondary_of(x, cv_tag[b], f2) && free_count(secondary_of(x, cv_tag[a], f1)) < 2u) {
        continue;
      }
      la = a; lb = b; fa = f1; fb = f2;
      break;
    }
  }
  if (la == NONE) { return FULL; }
  let wa = secondary_of(x, cv_tag[la], fa);
  let wb = secondary_of(x, cv_tag[lb], fb);
  let k7 = cv_key[7];
  let stays7 = la != 7u && lb != 7u;
  // Slot 7's key, if it stays, moves to a freed slot: if it is secondary, its primary is owned too.
  if (stays7 && primary_of(k7) != x && !own(primary_of(k7))) { return RETRY; }
  if (!own(wa) || !own(wb)) { return RETRY; }
  if (free_count(wa) < select(1u, 2u, wa == wb) || free_count(wb) < 1u) { return RETRY; }
  let v7 = value_at(x, 7u);
  let va = select(value_at(x, la & 7u), value, la == 8u);
  let vb = value_at(x, lb);
  put(wa, free_slot(wa), cv_key[la], va);
  put(wb, free_slot(wb), cv_key[lb], vb);
  // Freed slots below 7 take the new key (unless it left) and slot 7's key (unless it left).
  var pending_new = la != 8u;
  var pending_7 = stays7;
  for (var q = 0u; q < 2u; q++) {
    let slot = select(la, lb, q == 1u);
    if (slot >= 7u) { continue; }
    if (pending_new) { put(x, slot, key, value); pending_new = false; }
    else if (pending_7) { put(x, slot, k7, v7); pending_7 = false; }
  }
  set_rea(x, with_entry(with_entry(0u, cv_tag[la], fa), cv_tag[lb], fb));
  store_word(16u * x + 14u, REMAP);
  if (!PLAN) { count(T_TO_B, 1u); }
  return INSERTED;
}

// FULL for a key of entry (x, t) of owned x; an entry no key uses (group 0: set by a spill pass
// whose claim then lost its slot) is cleared on the way, so lookups do not follow it.
var<private> clears_entry: bool;
fn unused_full(x: u32, t: u32, group: u32) -> u32 {
  if (group == 0u) {
    set_rea(x, with_entry(rea_of(x), t, 0u));
    clears_entry = true;
  }
  return FULL;
}

// The last resort of a secondary key, after every move the paper makes failed: a primary key q of
// owned Type B bucket z leaves for its own entry's bucket, if that has a free slot (an unset entry
// takes q's least-loaded candidate with room), and frees q's slot. A second departure from the
// paper's rule that secondary keys never displace primary ones; without it about half of the
// builds to 0.9 of 2^27 slots left a key or two unplaced. The freed slot, NONE or RETRY_SLOT.
fn push_primary(z: u32) -> u32 {
  if (!is_type_b(z)) { return NONE; }
  for (var s = 0u; s < 7u; s++) {
    let q = key_at(z, s);
    if (is_reserved(q) || primary_of(q) != z) { continue; }
    let tq = tag_of(q);
    let rea = rea_of(z);
    var e = entry_of(rea, tq);
    if (e == 0u) { e = best_candidate(z, tq, 1u, z, 0u); }
    if (e == 0u) { continue; }
    let w = secondary_of(z, tq, e);
    if (w == z) { continue; }
    if (!own(w)) { return RETRY_SLOT; }
    let f = free_slot(w);
    if (f == NONE) { continue; }
    put(w, f, q, value_at(z, s));
    clear_slot(z, s);
    set_rea(z, with_entry(rea, tq, e));
    if (!PLAN) { count(T_PUSHED, 1u); }
    return s;
  }
  return NONE;
}

// Key of entry (x, t) into owned bucket z by push_primary, else unused_full.
fn pushed_or_full(x: u32, t: u32, z: u32, group: u32, key: u32, value: u32) -> u32 {
  let f = push_primary(z);
  if (f == RETRY_SLOT) { return RETRY; }
  if (f == NONE) { return unused_full(x, t, group); }
  put(z, f, key, value);
  return INSERTED;
}

// Places key as a secondary key of entry (x, t) of owned Type B bucket x, without touching x's
// slots: the entry's bucket if it has room (or can make room by moving out another entry's
// group), else the entry's whole group moves, with the key, to a bucket that holds them all;
// an unset entry takes its least-loaded candidate (or one that can make room). INSERTED, FULL or RETRY.
fn place_secondary(x: u32, t: u32, key: u32, value: u32) -> u32 {
  let e = entry_of(rea_of(x), t);
  if (e == 0u) {
    let i = best_candidate(x, t, 1u, x, 0u);
    if (i != 0u) {
      let w = secondary_of(x, t, i);
      if (!own(w)) { return RETRY; }
      let f = free_slot(w);
      if (f == NONE) { return RETRY; }
      put(w, f, key, value);
      set_rea(x, with_entry(rea_of(x), t, i));
      return INSERTED;
    }
    // No candidate has room: the bounded eviction search, one level deep in every candidate.
    for (var j = 1u; j <= FUNCTIONS; j++) {
      let w = secondary_of(x, t, j);
      if (w == x) { continue; }
      if (!own(w)) { return RETRY; }
      let f = evict_secondary(w, x, t);
      if (f == RETRY_SLOT) { return RETRY; }
      if (f != NONE) {
        put(w, f, key, value);
        set_rea(x, with_entry(rea_of(x), t, j));
        return INSERTED;
      }
    }
    // Then a full Type A candidate made Type B, its leavers making room for the key.
    for (var j = 1u; j <= FUNCTIONS; j++) {
      let w = secondary_of(x, t, j);
      if (w == x || is_type_b(w)) { continue; }
      let r = convert(w, key, value);
      if (r == RETRY) { return RETRY; }
      if (r == INSERTED) {
        set_rea(x, with_entry(rea_of(x), t, j));
        return INSERTED;
      }
    }
    // Last, a primary key of a Type B candidate leaves for its own secondary bucket.
    for (var j = 1u; j <= FUNCTIONS; j++) {
      let w = secondary_of(x, t, j);
      if (w == x) { continue; }
      if (!own(w)) { return RETRY; }
      let f = push_primary(w);
      if (f == RETRY_SLOT) { return RETRY; }
      if (f != NONE) {
        put(w, f, key, value);
        set_rea(x, with_entry(rea_of(x), t, j));
        return INSERTED;
      }
    }
    return FULL;
  }
  let z = secondary_of(x, t, e);
  if (!own(z)) { return RETRY; }
  var f = free_slot(z);
  if (f == NONE) { f = evict_secondary(z, x, t); }
  if (f == RETRY_SLOT) { return RETRY; }
  if (f != NONE) {
    put(z, f, key, value);
    return INSERTED;
  }
  // z has no room for one more key of the entry: z, if Type A, turns Type B (two of its primary
  // keys leave) and keeps the key with its group; else the entry's whole group moves, with the
  // key, to another secondary bucket of the entry that holds them all.
  if (!is_type_b(z)) {
    let r = convert(z, key, value);
    if (r != FULL) { return r; }
  }
  var group = 0u;
  for (var s = 0u; s < 8u; s++) {
    let k = key_at(z, s);
    if (!is_reserved(k) && primary_of(k) == x && tag_of(k) == t) { group |= 1u << s; }
  }
  let need = countOneBits(group) + 1u;
  var i = best_candidate(x, t, need, z, e);
  if (i == 0u) {
    // No bucket of the entry has that much room: make it in one by moving other entries' groups
    // out (one level each), the emptiest candidate first.
    i = best_candidate(x, t, 1u, z, e);
    if (i == 0u) { return pushed_or_full(x, t, z, group, key, value); }
    let w = secondary_of(x, t, i);
    if (!own(w)) { return RETRY; }
    // The planning pass writes nothing, so it counts the groups it would move as moved (and
    // skips them): it reserves what the executing pass needs, and its answer is the same.
    var room = free_count(w);
    var gone = 0u;
    for (var tries = 0u; tries < 8u && room < need; tries++) {
      let g = evict_group(w, x, t, gone);
      if (g == RETRY_SLOT) { return RETRY; }
      if (g == 0u) { break; }
      gone |= g;
      room = select(free_count(w), room + countOneBits(g), PLAN);
    }
    if (room < need) { return pushed_or_full(x, t, z, group, key, value); }
  }
  let w = secondary_of(x, t, i);
  if (!own(w)) { return RETRY; }
  if (free_count(w) < need) { return RETRY; }
  for (var s = 0u; s < 8u; s++) {
    if ((group & (1u << s)) == 0u) { continue; }
    put(w, free_slot(w), key_at(z, s), value_at(z, s));
    clear_slot(z, s);
  }
  put(w, free_slot(w), key, value);
  set_rea(x, with_entry(rea_of(x), t, i));
  return INSERTED;
}

// A secondary insert into owned bucket x (Type B, full): the key placed as secondary, else the
// primary-swap fallback: a primary key q of x (another tag) is placed as secondary instead and
// the new key takes its slot (both primary: lookups cost the same).
fn secondary_insert(x: u32, t: u32, key: u32, value: u32) -> u32 {
  let r = place_secondary(x, t, key, value);
  if (r != FULL) { return r; }
  for (var s = 0u; s < 7u; s++) {
    let q = key_at(x, s);
    if (is_reserved(q) || primary_of(q) != x) { continue; }
    let tq = tag_of(q);
    if (tq == t) { continue; }
    let rq = place_secondary(x, tq, q, value_at(x, s));
    if (rq == RETRY) { return RETRY; }
    if (rq == INSERTED) {
      put(x, s, key, value);
      drop_unused_entry(x, t);
      return INSERTED;
    }
  }
  return FULL;
}

// Key of entry (x, t) of owned bucket x went into x itself: the entry, if a spill pass set it and
// no key of it got into its bucket, is cleared, so every set entry stays in use (x can gain free
// slots after the spill passes: an evicted group of two frees two, a pushed key one). Keys of the
// entry are only moved by x's owner, so what this reads of the entry's bucket is stable.
fn drop_unused_entry(x: u32, t: u32) {
  if (!is_type_b(x)) { return; }
  let rea = rea_of(x);
  let e = entry_of(rea, t);
  if (e == 0u) { return; }
  let z = secondary_of(x, t, e);
  for (var s = 0u; s < 8u; s++) {
    let k = key_at(z, s);
    if (!is_reserved(k) && primary_of(k) == x && tag_of(k) == t) { return; }
  }
  set_rea(x, with_entry(rea, t, 0u));
}

// Only a positive sighting counts: a key being moved may be missed, never invented.
fn sighted(x: u32, t: u32, key: u32) -> bool {
  if (slot_of(x, key) != NONE) { return true; }
  return remapped_slot(x, t, key).y != NONE;
}

fn horton_insert(key: u32, value: u32, assign: bool) -> u32 {
  let x = primary_of(key);
  let t = tag_of(key);
  // Copies that reach the rounds were absent when the batch began (the fast pass looked):
  // one seen now was added by this batch, and its value is one of the batch's.
  if (sighted(x, t, key)) { return EXISTED; }
  if (!own(x)) { return RETRY; }
  var s = slot_of(x, key);
  if (s != NONE) {
    if (assign) { store_value(x, s, value); }
    return EXISTED;
  }
  let r = remapped_slot(x, t, key);
  if (r.y != NONE) {
    if (assign) { store_value(r.x, r.y, value); }
    return EXISTED;
  }
  s = free_slot(x);
  if (s == NONE) {
    // Primary keys may displace secondary ones.
    s = evict_secondary(x, NONE, NONE);
    if (s == RETRY_SLOT) { return RETRY; }
  }
  if (s != NONE) {
    put(x, s, key, value);
    drop_unused_entry(x, t);
    return INSERTED;
  }
  if (!is_type_b(x)) { return convert(x, key, value); }
  // A Type B bucket none of whose entries is set (its keys found no secondary room after a spill
  // pass converted it): back to Type A, and the key takes slot 7.
  if (rea_of(x) == 0u) {
    put(x, 7u, key, value);
    if (!PLAN) { count(T_TO_A, 1u); }
    return INSERTED;
  }
  return secondary_insert(x, t, key, value);
}

// BCHT: the bucket of key's two that is not b (b itself when both are b).
fn other_bucket(key: u32, b: u32) -> u32 {
  let first = primary_of(key);
  return select(first, second_of(key), first == b);
}

fn bcht_insert(key: u32, value: u32, assign: bool) -> u32 {
  let b1 = primary_of(key);
  let b2 = second_of(key);
  if (!assign && (slot_of(b1, key) != NONE || slot_of(b2, key) != NONE)) { return EXISTED; }
  if (!own(b1) || !own(b2)) { return RETRY; }
  for (var c = 0u; c < 2u; c++) {
    let b = select(b1, b2, c == 1u);
    let s = slot_of(b, key);
    if (s != NONE) {
      if (assign) { store_value(b, s, value); }
      return EXISTED;
    }
  }
  // Load balancing: the emptier of the two buckets.
  let f1 = free_count(b1);
  let f2 = free_count(b2);
  if (f1 > 0u || f2 > 0u) {
    let b = select(b2, b1, first_emptier(key, f1, f2));
    put(b, free_slot(b), key, value);
    return INSERTED;
  }
  // Both full: move one key of either bucket to its other bucket (one level of cuckoo eviction),
  // the tie bucket's keys first, so the key lands in either bucket alike.
  let pair = bcht_pair(key);
  for (var c = 0u; c < 2u; c++) {
    let b = select(pair.x, pair.y, c == 1u);
    for (var s = 0u; s < 8u; s++) {
      let g = key_at(b, s);
      let a = other_bucket(g, b);
      if (a == b || free_count(a) == 0u) { continue; }
      if (!own(a)) { return RETRY; }
      let f = free_slot(a);
      if (f == NONE) { continue; }
      put(a, f, g, value_at(b, s));
      put(b, s, key, value);
      return INSERTED;
    }
  }
  // Then two levels: a key h of g's other bucket a moves to its own other bucket d, g takes h's
  // slot, the key takes g's.
  for (var c = 0u; c < 2u; c++) {
    let b = select(pair.x, pair.y, c == 1u);
    for (var s = 0u; s < 8u; s++) {
      let g = key_at(b, s);
      let a = other_bucket(g, b);
      if (a == b1 || a == b2) { continue; }
      for (var u = 0u; u < 8u; u++) {
        let h = key_at(a, u);
        let d = other_bucket(h, a);
        if (d == a || d == b1 || d == b2 || free_count(d) == 0u) { continue; }
        if (!own(a) || !own(d)) { return RETRY; }
        let f = free_slot(d);
        if (f == NONE) { continue; }
        put(d, f, h, value_at(a, u));
        put(a, u, g, value_at(b, s));
        put(b, s, key, value);
        return INSERTED;
      }
    }
  }
  return FULL;
}
`;
const lockedInsertOf = (name: string, room: typeof exactRoomModule) =>
  wgslModule(name, lockedInsertSource, {
    requires: [hortonFastModule, room, ownershipModule],
    needs: ['buckets', 'locks', 'T_TO_B', 'T_PUSHED'],
  });
/** The locked insert, comparing candidates by the room their key words show. */
export const lockedInsertModule = lockedInsertOf('horton.locked-insert', exactRoomModule);
/**
 * The same, comparing candidates by the bulk build's room bytes (one load a candidate, not eight),
 * which every executing key keeps exact for the buckets it owns.
 */
const hintedLockedInsertModule = lockedInsertOf('horton.locked-insert-hinted', hintedRoomModule);

/** Pass 1 of an insert batch: the lock-free fast path; keys it cannot settle go to `queue_out`. */
export const fastInsertKernel = defineKernel({
  name: 'horton.insert-fast',
  workgroupSize: WORKGROUP_SIZE,
  variant: { mode: 'horton', assign: false } as { mode: 'horton' | 'bcht'; assign: boolean },
  params: hortonParams,
  bindings: (v: { mode: 'horton' | 'bcht' }) => ({
    params: uniform(),
    buckets: atomicsRW,
    keys: words,
    values: words,
    queue_out: atomicsRW,
    counters: atomicsRW,
    failed: atomicsRW,
    // Horton: spill counts per bucket (the buckets' ownership stamps, cleared for the batch).
    ...(v.mode === 'horton' ? { spill: atomicsRW } : {}),
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entry} {
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    var queue = false;
    if (i < params.n) {
      let key = keys[i];
      if (is_reserved(key)) {
        report_failure(i | FAILURE_RESERVED);
      } else {
        let r = ${v.mode === 'bcht' ? 'fast_insert_bcht' : 'fast_insert'}(key, values[i], ASSIGN);
        if (r == INSERTED) { count(T_ADDED, 1u); }
        queue = r == RETRY || r == SPILL;
      }
    }
    append_queue_out(queue, i, lid);
  }
  flush_tallies(lid);
}`,
      {
        modules: [
          gridModule,
          v.mode === 'bcht' ? hortonFastModule : hortonPrimaryModule,
          exactRoomModule,
          talliesModule,
          failureListModule,
          workgroupAppendModule('queue_out'),
        ],
        constants: { ASSIGN: v.assign, PLAN: false },
      },
    ),
});

/**
 * Before each round: the round's grid from the queue's length (indirect dispatch), and the next
 * queue emptied.
 */
export const roundArgsKernel = defineKernel({
  name: 'horton.round-args',
  workgroupSize: 1,
  variant: { maxWorkgroups: 4096 },
  bindings: { queue_in: words, queue_out: atomicsRW, args: storage('read_write', 'u32') },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
@compute @workgroup_size(1)
fn main() {
  let n = min(queue_in[0], arrayLength(&queue_in) - 1u);
  args[0] = min((n + ${WORKGROUP_SIZE - 1}u) / ${WORKGROUP_SIZE}u, ${v.maxWorkgroups}u);
  args[1] = 1u;
  args[2] = 1u;
  atomicStore(&queue_out[0], 0u);
}`,
      {},
    ),
});

/**
 * One pass of a locked insert round over the keys queued (batch indices in `queue_in`): the
 * planning pass (params.flags bit 0) reserves buckets and writes nothing;
 * the executing pass inserts. Keys that do not own a bucket they need go to `queue_out` for the
 * next round; in the `last` round they are reported as contended. A key that finds no room tries
 * again in the next rounds (moves elsewhere may make some); once strikes count (flags bit 2: from
 * round STRIKE_FREE_ROUNDS of the batch on), up to MAX_STRIKES + 1 more times, then it is reported
 * failed. Queue entries are batch indices with the strikes in the top two bits.
 */
export const insertRoundKernel = defineKernel({
  name: 'horton.insert-round',
  workgroupSize: WORKGROUP_SIZE,
  // hinted: after a bulk build, candidates' rooms come from its room bytes (`hints`).
  variant: { mode: 'horton', assign: false, hinted: false } as { mode: 'horton' | 'bcht'; assign: boolean; hinted: boolean },
  params: hortonParams,
  bindings: (v: { hinted: boolean }) => ({
    params: uniform(),
    buckets: atomicsRW,
    locks: atomicsRW,
    keys: words,
    values: words,
    queue_in: words,
    queue_out: atomicsRW,
    counters: atomicsRW,
    failed: atomicsRW,
    planned: atomicsRW,
    ...(v.hinted ? { hints: atomicsRW } : {}),
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
// The pass: planning (flags bit 0) or executing; the last round (bit 1) reports what is left.
var<private> PLAN: bool;
${entry} {
  PLAN = (params.flags & 1u) != 0u;
  let LAST = (params.flags & 2u) != 0u;
  let STRIKES = (params.flags & 4u) != 0u;
  let n = min(queue_in[0], arrayLength(&queue_in) - 1u);
  ${gridStrideLoop('j', 'n', WORKGROUP_SIZE)} {
    let entry = queue_in[1u + j];
    let i = entry & INDEX_MASK;
    let strikes = entry >> 30u;
    let key = keys[i];
    if (is_reserved(key)) {
      if (!PLAN) { report_failure(i | FAILURE_RESERVED); }
      continue;
    }
    begin_key(j);
    clears_entry = false;
    // A key whose planning found no room finds none executing either (what it read of buckets it
    // owns is unchanged; a bucket another key owns gives it RETRY at most), so it does not search
    // again: the longest searches are those that end in no room, and a round lasts its longest.
    // Unless that search clears an unused entry, which only the executing pass writes.
    let bit = 1u << (j % 32u);
    var r = FULL;
    if (PLAN || !HORTON || (atomicLoad(&planned[j / 32u]) & bit) == 0u) {
      r = ${v.mode === 'bcht' ? 'bcht_insert' : 'horton_insert'}(key, values[i], ASSIGN);
    }
    if (r == RETRY && overflowed) { r = FULL; }
    ${
      v.hinted
        ? `// The room bytes of the buckets this key owned (and may have written), exact again.
    if (!PLAN) { for (var k = 0u; k < n_owned; k++) { set_room(owned[k], free_count(owned[k])); } }`
        : ''
    }
    if (PLAN) {
      if (HORTON && r == FULL && !clears_entry) { atomicOr(&planned[j / 32u], bit); }
      else if (HORTON) { atomicAnd(&planned[j / 32u], ~bit); }
      continue;
    }
    if (r == INSERTED) { count(T_ADDED, 1u); }
    else if (r == FULL && (LAST || (STRIKES && strikes == MAX_STRIKES))) { report_failure(i); }
    else if (r == RETRY && LAST) { report_failure(i | FAILURE_CONTENDED); }
    else if (r != EXISTED) {
      // Contended, or no room as of this round (moves elsewhere may make some): the next round.
      let at = atomicAdd(&queue_out[0], 1u);
      atomicStore(&queue_out[1u + at], i | (select(strikes, strikes + 1u, r == FULL && STRIKES) << 30u));
    }
  }
  flush_tallies(lid);
}`,
      {
        modules: [gridModule, v.hinted ? hintedLockedInsertModule : lockedInsertModule, talliesModule, failureListModule],
        constants: { ASSIGN: v.assign, INDEX_MASK: 0x3fffffff, MAX_STRIKES: 3, HORTON: v.mode === 'horton' },
      },
    ),
});
