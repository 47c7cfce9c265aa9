import { cooperativeVariantModule, fmix32Module, unrolled, type WgslModule, wgslModule } from '@gpuhash/kernels';
import type { KeyLayout } from './layout';

/** Declarations every linear-probe kernel shares: key sentinels, result codes, home slot (the kernel declares `params`). */
export const commonU32Module = wgslModule(
  'linear-probe.common-u32',
  /* wgsl */ `
alias Key = u32;
const EMPTY: u32 = 0xffffffffu;
const TOMBSTONE: u32 = 0xfffffffeu;
const BUSY: u32 = 0xfffffffdu;
const NONE: u32 = 0xffffffffu;

const INSERTED: u32 = 0u;
const EXISTED: u32 = 1u;
const FAILED: u32 = 2u;
const INSERTED_IN_TOMB: u32 = 3u;


fn lp_home(key: u32) -> u32 { return hash_fmix32(key ^ params.seed) & params.mask; }

// The read-only view of a slot: (key, value).
fn slot_is_live(s: vec2<u32>) -> bool { return s.x < BUSY; }
fn slot_is_tomb(s: vec2<u32>) -> bool { return s.x == TOMBSTONE; }
fn slot_key(s: vec2<u32>) -> u32 { return s.x; }
fn slot_value(s: vec2<u32>) -> u32 { return s.y; }
`,
  { requires: [fmix32Module], needs: ['params'] },
);

/** Most slots an insert reads ahead at once (`PROBE_AHEAD` picks 0..this many). */
export const MAX_PROBE_AHEAD = 16;
/** Most slot pairs a lookup reads at once after its first (`PAIRS_AHEAD` picks 0..this many). */
export const MAX_PAIRS_AHEAD = 8;

const upTo = (n: number, f: (t: number) => string) => unrolled(n, (i) => f(i + 1));

/**
 * WGSL statements of one read-ahead step of a lookup: PAIRS_AHEAD slot pairs from pair index `p`
 * (of `pairs`), every load issued before any is tested, then tested in probe order: `hit(v)` where
 * a slot holds `key` (v: its value), `miss` at the first EMPTY slot.
 */
function pairsAheadStep(hit: (value: string) => string, miss: string): string {
  const loads = upTo(
    MAX_PAIRS_AHEAD,
    (t) => `    var q${t} = vec4<u32>(EMPTY);\n    if (PAIRS_AHEAD >= ${t}u) { q${t} = slots_ro[(p + ${t - 1}u) & (pairs - 1u)]; }`,
  );
  const tests = upTo(
    MAX_PAIRS_AHEAD,
    (t) => `    if (PAIRS_AHEAD >= ${t}u) {
      if (q${t}.x == key) { ${hit(`q${t}.y`)} }
      if (q${t}.x == EMPTY) { ${miss} }
      if (q${t}.z == key) { ${hit(`q${t}.w`)} }
      if (q${t}.z == EMPTY) { ${miss} }
    }`,
  );
  return `${loads}\n${tests}`;
}

/**
 * `lp_look_ahead(slot, key)`: the offset t (1..PROBE_AHEAD) of the first slot after `slot` whose
 * key word is EMPTY or key, 0 when none is. Every load is issued before any is tested, so a long
 * probe pays one round trip per PROBE_AHEAD slots instead of one per slot (the loads the constant
 * leaves out fold away).
 */
const lookAheadCode = /* wgsl */ `
fn lp_look_ahead(slot: u32, key: u32) -> u32 { return lp_look_ahead_to(slot, key, false); }

// The same, also stopping at a BUSY slot (with stop_busy: an insert of a mixed batch waits there).
fn lp_look_ahead_to(slot: u32, key: u32, stop_busy: bool) -> u32 {
${upTo(MAX_PROBE_AHEAD, (t) => `  var w${t} = TOMBSTONE;\n  if (PROBE_AHEAD >= ${t}u) { w${t} = atomicLoad(&slots[2u * ((slot + ${t}u) & params.mask)]); }`)}
${upTo(MAX_PROBE_AHEAD, (t) => `  if (PROBE_AHEAD >= ${t}u && (w${t} == key || w${t} == EMPTY || (stop_busy && w${t} == BUSY))) { return ${t}u; }`)}
  return 0u;
}

// Past slot, which holds another key for good (keys and tombstones never turn back into EMPTY,
// BUSY or key within a batch that reuses no tombstone): the slot to go on from and the slots
// skipped, reading PROBE_AHEAD at once (one slot when 0).
fn lp_skip(slot: u32, key: u32, stop_busy: bool) -> vec2<u32> {
  if (PROBE_AHEAD == 0u) { return vec2<u32>((slot + 1u) & params.mask, 1u); }
  let t = lp_look_ahead_to(slot, key, stop_busy);
  let step = select(PROBE_AHEAD, t, t != 0u);
  return vec2<u32>((slot + step) & params.mask, step);
}`;

/**
 * The slot protocol for u32 keys. A slot is two words, key then value, in one storage buffer:
 * kernels that write bind it as `slots: array<atomic<u32>>`, pure lookups bind the same buffer as
 * `slots_ro: array<vec2<u32>>` and read a slot with one plain 8-byte load.
 *
 * Key word states: EMPTY -> key (claimed by CAS), key -> TOMBSTONE (erase), TOMBSTONE -> key
 * (reuse, in pure insert batches only). Inside mixed batches a claim goes EMPTY -> BUSY -> key:
 * the value is stored before the key is published, so a concurrent find that sees the key also
 * sees its value, and an insert of the same key waits at a BUSY slot instead of claiming another.
 * Keys never move, so a probe sequence only ever grows until a rehash.
 *
 * Needs, from the including kernel: `params` (Params), `slots` (array<atomic<u32>>), the
 * constants REUSE_TOMBS, PUBLISH_BUSY and BLIND_CAS (bool), and PROBE_AHEAD (u32: slots the blind
 * insert reads at once past an occupied slot, 0 for one at a time).
 */
export const slotsU32Module = wgslModule(
  'linear-probe.slots-u32',
  /* wgsl */ `${lookAheadCode}
// Stores the value of a freshly claimed slot, then (in mixed batches) publishes its key.
fn lp_publish(slot: u32, key: u32, value: u32) {
  atomicStore(&slots[2u * slot + 1u], value);
  if (PUBLISH_BUSY) { atomicStore(&slots[2u * slot], key); }
}

// Claims slot by CAS from 'expected' (EMPTY or TOMBSTONE); true when this invocation owns it.
fn lp_claim(slot: u32, expected: u32, key: u32, value: u32) -> bool {
  let claim = select(key, BUSY, PUBLISH_BUSY);
  let r = atomicCompareExchangeWeak(&slots[2u * slot], expected, claim);
  if (r.exchanged) { lp_publish(slot, key, value); }
  return r.exchanged;
}

// Inserts one pair; with assign, an existing key gets the new value (else the first value stays). Bounded: at most max_probes slots from home,
// and a bounded number of retries, so a full table reports FAILED instead of hanging.
fn lp_insert(key: u32, value: u32, assign: bool) -> u32 {
  let home = lp_home(key);
  var slot = home;
  var probes = 0u;
  var first_tomb = NONE;
  var budget = params.max_probes * 4u + 64u;
  loop {
    if (budget == 0u) { return FAILED; }
    budget -= 1u;
    if (probes >= params.max_probes) {
      // The key is not within reach of its home; a tombstone seen on the way may take it.
      if (REUSE_TOMBS && first_tomb != NONE) {
        if (lp_claim(first_tomb, TOMBSTONE, key, value)) { return INSERTED_IN_TOMB; }
        slot = home; probes = 0u; first_tomb = NONE;
        continue;
      }
      return FAILED;
    }
    var k: u32;
    if (BLIND_CAS && !REUSE_TOMBS && !PUBLISH_BUSY) {
      // The paper's insert: CAS every probed slot; a failed CAS returns what the slot holds,
      // so no separate load is needed (one atomic per probe instead of two on the claim).
      let r = atomicCompareExchangeWeak(&slots[2u * slot], EMPTY, key);
      if (r.exchanged) {
        atomicStore(&slots[2u * slot + 1u], value);
        return INSERTED;
      }
      k = r.old_value;
      if (k == EMPTY) { continue; } // spurious failure
      if (PROBE_AHEAD > 0u && k != key) {
        // Keys never leave a slot in these batches: skip to the next slot that is EMPTY or holds
        // key (its CAS then claims it, or fails with key: EXISTED), reading PROBE_AHEAD at once.
        loop {
          let t = lp_look_ahead(slot, key);
          let step = select(PROBE_AHEAD, t, t != 0u);
          slot = (slot + step) & params.mask;
          probes += step;
          if (t != 0u || probes >= params.max_probes) { break; }
        }
        continue;
      }
    } else {
      k = atomicLoad(&slots[2u * slot]);
    }
    if (k == key) {
      if (assign) { atomicStore(&slots[2u * slot + 1u], value); }
      return EXISTED;
    }
    if (k == EMPTY) {
      // The key is not in the table: take the first tombstone on the way, else this slot.
      if (REUSE_TOMBS && first_tomb != NONE) {
        if (lp_claim(first_tomb, TOMBSTONE, key, value)) { return INSERTED_IN_TOMB; }
        slot = home; probes = 0u; first_tomb = NONE;
        continue;
      }
      if (lp_claim(slot, EMPTY, key, value)) { return INSERTED; }
      continue; // lost the race (or a spurious failure): look at this slot again
    }
    if (k == BUSY) { continue; } // an insert is publishing here; it may be this key
    if (REUSE_TOMBS && k == TOMBSTONE && first_tomb == NONE) { first_tomb = slot; }
    if (PUBLISH_BUSY && !REUSE_TOMBS) {
      // A mixed batch's insert: skip ahead to the next slot that is EMPTY, BUSY or key.
      let next = lp_skip(slot, key, true);
      slot = next.x;
      probes += next.y;
      continue;
    }
    slot = (slot + 1u) & params.mask;
    probes += 1u;
  }
}

// Erases one key: its slot becomes a tombstone. True when this invocation erased it.
fn lp_erase(key: u32) -> bool {
  var slot = lp_home(key);
  var probes = 0u;
  loop {
    if (probes >= params.max_probes) { return false; }
    let k = atomicLoad(&slots[2u * slot]);
    if (k == key) {
      let r = atomicCompareExchangeWeak(&slots[2u * slot], key, TOMBSTONE);
      if (r.exchanged) { return true; }
      if (r.old_value == key) { continue; } // spurious failure: try again
      return false; // erased by another invocation meanwhile
    }
    if (k == EMPTY) { return false; }
    // Another key, a tombstone or BUSY: a key cannot appear in an EMPTY slot behind it unseen.
    let next = lp_skip(slot, key, false);
    slot = next.x;
    probes += next.y;
  }
}

// Lookup through the atomic view (mixed batches). x = value, y = 1 when found.
fn lp_find_atomic(key: u32) -> vec2<u32> {
  var slot = lp_home(key);
  var probes = 0u;
  loop {
    if (probes >= params.max_probes) { break; }
    let k = atomicLoad(&slots[2u * slot]);
    if (k == key) { return vec2<u32>(atomicLoad(&slots[2u * slot + 1u]), 1u); }
    if (k == EMPTY) { break; }
    let next = lp_skip(slot, key, false);
    slot = next.x;
    probes += next.y;
  }
  return vec2<u32>(0u, 0u);
}
`,
  { requires: [commonU32Module], needs: ['params', 'slots', 'REUSE_TOMBS', 'PUBLISH_BUSY', 'BLIND_CAS', 'PROBE_AHEAD'] },
);

/**
 * Lookup through the read-only view, which binds the table as `slots_ro: array<vec4<u32>>`: one
 * plain 16-byte load reads an aligned pair of slots (the capacity is even, so a pair never wraps),
 * halving the loads of long probes. Plain loads are served by the cache; atomic loads bypass L1 and
 * cost 2.5x at high load (measured on an H200). Only valid in dispatches that do not write the table.
 */
export const findU32Module = wgslModule(
  'linear-probe.find-u32',
  /* wgsl */ `
fn lp_find(key: u32) -> vec2<u32> {
  var slot = lp_home(key);
  var probes = 0u;
  loop {
    let pair = slots_ro[slot >> 1u];
    if ((slot & 1u) == 0u) {
      if (pair.x == key) { return vec2<u32>(pair.y, 1u); }
      if (pair.x == EMPTY) { break; }
      probes += 1u;
      if (probes >= params.max_probes) { break; }
    }
    if (pair.z == key) { return vec2<u32>(pair.w, 1u); }
    if (pair.z == EMPTY) { break; }
    probes += 1u;
    if (probes >= params.max_probes) { break; }
    slot = ((slot | 1u) + 1u) & params.mask;
    if (PAIRS_AHEAD > 0u) { return lp_find_ahead(key, slot >> 1u, probes); }
  }
  return vec2<u32>(0u, 0u);
}

// Past the home pair: PAIRS_AHEAD pairs per step, every load issued before any is tested (a long
// probe pays one round trip per step instead of one per pair). Reading a few slots past
// max_probes is harmless: no key is stored there.
fn lp_find_ahead(key: u32, first: u32, done: u32) -> vec2<u32> {
  let pairs = (params.mask >> 1u) + 1u;
  var p = first;
  var probes = done;
  loop {
${pairsAheadStep((v) => `return vec2<u32>(${v}, 1u);`, 'break;')}
    probes += 2u * PAIRS_AHEAD;
    p += PAIRS_AHEAD;
    if (probes >= params.max_probes) { break; }
  }
  return vec2<u32>(0u, 0u);
}
`,
  { requires: [commonU32Module], needs: ['params', 'slots_ro', 'PAIRS_AHEAD'] },
);

/**
 * Lookups whose long probes are walked by the whole subgroup (`lp_find_coop`). Each lane first
 * probes alone: its home pair, then up to PRIVATE_STEPS steps of PAIRS_AHEAD pairs. The lookups
 * still unresolved after that (a few percent at load 0.9, the tail that sets a small batch's time)
 * are then taken one at a time by the group (a tile of a subgroup): each lane reads one pair of
 * the probe, so a step covers 2 x (group size) slots, and one ballot finds the first slot that
 * holds the key or is EMPTY. Every lane of the group calls it together (`live` false: no
 * lookup of its own).
 */
export function findCoopU32Module(subgroups: boolean): WgslModule {
  return cooperativeVariantModule(
    'linear-probe.find-coop-u32',
    subgroups,
    /* wgsl */ `
struct LpProbe { value: u32, found: u32, done: bool, pair: u32, probes: u32 }

// A lane's own part: resolved (done), or where the group goes on (the next pair, slots walked).
fn lp_find_private(key: u32) -> LpProbe {
  let miss = LpProbe(0u, 0u, true, 0u, 0u);
  let slot = lp_home(key);
  let home = slots_ro[slot >> 1u];
  var probes = 0u;
  if ((slot & 1u) == 0u) {
    if (home.x == key) { return LpProbe(home.y, 1u, true, 0u, 0u); }
    if (home.x == EMPTY) { return miss; }
    probes = 1u;
  }
  if (home.z == key) { return LpProbe(home.w, 1u, true, 0u, 0u); }
  if (home.z == EMPTY) { return miss; }
  probes += 1u;
  let pairs = (params.mask >> 1u) + 1u;
  var p = ((slot >> 1u) + 1u) & (pairs - 1u);
  for (var step = 0u; step < PRIVATE_STEPS; step++) {
    if (probes >= params.max_probes) { return miss; }
${pairsAheadStep((v) => `return LpProbe(${v}, 1u, true, 0u, 0u);`, 'return miss;')}
    p = (p + PAIRS_AHEAD) & (pairs - 1u);
    probes += 2u * PAIRS_AHEAD;
  }
  if (probes >= params.max_probes) { return miss; }
  return LpProbe(0u, 0u, false, p, probes);
}

fn lp_find_coop(key: u32, live: bool) -> vec2<u32> {
  var me = LpProbe(0u, 0u, true, 0u, 0u);
  if (live) { me = lp_find_private(key); }
  let pairs = (params.mask >> 1u) + 1u;
  loop {
    let pending = cg_ballot32(!me.done);
    if (pending == 0u) { break; }
    let leader = firstTrailingBit(pending);
    let k = cg_broadcast(key, leader);
    var at = cg_broadcast(me.pair, leader);
    var walked = cg_broadcast(me.probes, leader);
    var value = 0u;
    var found = 0u;
    loop {
      if (walked >= params.max_probes) { break; }
      let q = slots_ro[(at + cg_lane()) & (pairs - 1u)];
      let ends = cg_ballot32(q.x == k || q.x == EMPTY || q.z == k || q.z == EMPTY);
      if (ends != 0u) {
        // The first pair (in probe order) that holds k or an EMPTY slot decides.
        var v = 0u;
        var f = 0u;
        if (q.x == k) {
          v = q.y;
          f = 1u;
        } else if (q.x != EMPTY && q.z == k) {
          v = q.w;
          f = 1u;
        }
        let first = firstTrailingBit(ends);
        value = cg_broadcast(v, first);
        found = cg_broadcast(f, first);
        break;
      }
      at = (at + cg_size()) & (pairs - 1u);
      walked += 2u * cg_size();
    }
    if (cg_lane() == leader) { me = LpProbe(value, found, true, 0u, 0u); }
  }
  return vec2<u32>(me.value, me.found);
}
`,
    { requires: [commonU32Module], needs: ['params', 'slots_ro', 'PAIRS_AHEAD', 'PRIVATE_STEPS'] },
  );
}

/**
 * The blind-CAS insert with long probes walked by the group, as `findCoopU32Module` does for
 * lookups: a lane runs its own insert for its home CAS and PRIVATE_STEPS read-aheads; an insert
 * still going is then taken by the group (a tile of a subgroup), one at a time: each lane reads one
 * key word of the probe, a ballot finds the first that is EMPTY or holds the key, and the lane that
 * owns the insert CASes that slot (a CAS that finds another key there goes on from that slot).
 * `lp_insert_coop` returns INSERTED, EXISTED or FAILED; every lane of the group calls it together.
 * Needs what `slotsU32Module` needs, with BLIND_CAS on and no tombstone reuse.
 */
export function insertCoopU32Module(subgroups: boolean): WgslModule {
  return cooperativeVariantModule(
    'linear-probe.insert-coop-u32',
    subgroups,
    /* wgsl */ `
const PENDING: u32 = 0xffffffffu;

// A lane's own part: x the result (PENDING: the group goes on), y the slot to go on from, z slots walked.
fn lp_insert_private(key: u32, value: u32, assign: bool) -> vec3<u32> {
  var slot = lp_home(key);
  var probes = 0u;
  var steps = 0u;
  loop {
    if (probes >= params.max_probes) { return vec3<u32>(FAILED, 0u, 0u); }
    let r = atomicCompareExchangeWeak(&slots[2u * slot], EMPTY, key);
    if (r.exchanged) {
      atomicStore(&slots[2u * slot + 1u], value);
      return vec3<u32>(INSERTED, 0u, 0u);
    }
    if (r.old_value == key) {
      if (assign) { atomicStore(&slots[2u * slot + 1u], value); }
      return vec3<u32>(EXISTED, 0u, 0u);
    }
    if (r.old_value == EMPTY) { continue; } // spurious failure
    loop {
      if (steps >= PRIVATE_STEPS) { return vec3<u32>(PENDING, slot, probes); }
      steps += 1u;
      let t = lp_look_ahead(slot, key);
      let step = select(PROBE_AHEAD, t, t != 0u);
      slot = (slot + step) & params.mask;
      probes += step;
      if (t != 0u || probes >= params.max_probes) { break; }
    }
  }
}

fn lp_insert_coop(key: u32, value: u32, assign: bool, live: bool) -> u32 {
  var mine = vec3<u32>(INSERTED, 0u, 0u);
  if (live) { mine = lp_insert_private(key, value, assign); }
  loop {
    let pending = cg_ballot32(mine.x == PENDING);
    if (pending == 0u) { break; }
    let leader = firstTrailingBit(pending);
    let k = cg_broadcast(key, leader);
    var at = cg_broadcast(mine.y, leader);
    var walked = cg_broadcast(mine.z, leader);
    var result = FAILED;
    var budget = params.max_probes + 64u;
    loop {
      if (walked >= params.max_probes || budget == 0u) { break; }
      budget -= 1u;
      let w = atomicLoad(&slots[2u * ((at + cg_lane()) & params.mask)]);
      let ends = cg_ballot32(w == k || w == EMPTY);
      if (ends == 0u) {
        at = (at + cg_size()) & params.mask;
        walked += cg_size();
        continue;
      }
      let first = firstTrailingBit(ends);
      at = (at + first) & params.mask;
      walked += first;
      if (walked >= params.max_probes) { break; }
      var r = PENDING;
      if (cg_lane() == leader) {
        let c = atomicCompareExchangeWeak(&slots[2u * at], EMPTY, key);
        if (c.exchanged) {
          atomicStore(&slots[2u * at + 1u], value);
          r = INSERTED;
        } else if (c.old_value == key) {
          if (assign) { atomicStore(&slots[2u * at + 1u], value); }
          r = EXISTED;
        }
      }
      r = cg_broadcast(r, leader);
      if (r != PENDING) {
        result = r;
        break;
      }
      // Another key took the slot (or the CAS failed spuriously): read on from it.
    }
    if (cg_lane() == leader) { mine = vec3<u32>(result, 0u, 0u); }
  }
  return mine.x;
}
`,
    { requires: [slotsU32Module], needs: ['params', 'slots', 'PROBE_AHEAD', 'PRIVATE_STEPS'] },
  );
}

/** u32 keys: 8-byte slots (key, value); EMPTY, TOMBSTONE and BUSY are reserved keys. */
export const u32Layout: KeyLayout = {
  name: 'u32',
  wordsPerKey: 1,
  wordsPerSlot: 2,
  emptyWord: 0xffffffff,
  slotType: 'vec2<u32>',
  findSlotType: 'vec4<u32>',
  common: commonU32Module,
  protocol: slotsU32Module,
  find: findU32Module,
  readKey: (i) => `keys[${i}]`,
  writeKey: (at, key) => `out_keys[${at}] = ${key};`,
  isReserved: (key) => `(${key} >= BUSY)`,
};
