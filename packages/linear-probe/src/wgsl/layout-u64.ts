import { fmix32Module, fmix64Module, wgslModule } from '@gpuhash/kernels';
import type { KeyLayout } from './layout';

/**
 * u64 keys: 16-byte slots (tag, lo, hi, value). A 64-bit key cannot be claimed with one 32-bit
 * CAS, so the slot's state lives in its own tag word and every u64 key is allowed:
 *   tag 0  EMPTY        tag 1  TOMBSTONE
 *   tag = fingerprint << 1      claimed, key and value being written (pending)
 *   tag = fingerprint << 1 | 1  ready: key and value are visible
 * The fingerprint (31 bits, never 0) comes from the key's hash, so a probe compares the full key
 * only when fingerprints match, and an insert waits at a pending slot only when it might hold the
 * same key.
 */
const commonU64Module = wgslModule(
  'linear-probe.common-u64',
  /* wgsl */ `
alias Key = vec2<u32>;
const EMPTY_TAG: u32 = 0u;
const TOMB_TAG: u32 = 1u;
const NONE: u32 = 0xffffffffu;

const INSERTED: u32 = 0u;
const EXISTED: u32 = 1u;
const FAILED: u32 = 2u;
const INSERTED_IN_TOMB: u32 = 3u;


fn lp_hash(key: Key) -> u32 { return hash_fmix64_u32(vec2<u32>(key.x ^ params.seed, key.y)); }
fn lp_home(key: Key) -> u32 { return lp_hash(key) & params.mask; }
// Pending tag of a key: an even number >= 2; its ready tag is one more.
fn lp_pending_tag(key: Key) -> u32 { return ((hash_fmix32(lp_hash(key) ^ 0x9e3779b9u) >> 1u) | 1u) << 1u; }

fn slot_is_live(s: vec4<u32>) -> bool { return (s.x & 1u) == 1u && s.x != TOMB_TAG; }
fn slot_is_tomb(s: vec4<u32>) -> bool { return s.x == TOMB_TAG; }
fn slot_key(s: vec4<u32>) -> Key { return s.yz; }
fn slot_value(s: vec4<u32>) -> u32 { return s.w; }
`,
  // The seed is folded into the key's low word (fmix64 stays a bijection).
  { requires: [fmix32Module, fmix64Module], needs: ['params'] },
);

const protocolU64Module = wgslModule(
  'linear-probe.slots-u64',
  /* wgsl */ `
fn lp_key_at(slot: u32) -> Key { return vec2<u32>(atomicLoad(&slots[4u * slot + 1u]), atomicLoad(&slots[4u * slot + 2u])); }

// Claims a slot by CAS of its tag, writes key and value, then marks it ready.
fn lp_claim(slot: u32, expected: u32, key: Key, value: u32, pending: u32) -> bool {
  let r = atomicCompareExchangeWeak(&slots[4u * slot], expected, pending);
  if (r.exchanged) {
    atomicStore(&slots[4u * slot + 1u], key.x);
    atomicStore(&slots[4u * slot + 2u], key.y);
    atomicStore(&slots[4u * slot + 3u], value);
    atomicStore(&slots[4u * slot], pending | 1u);
  }
  return r.exchanged;
}

fn lp_insert(key: Key, value: u32, assign: bool) -> u32 {
  let home = lp_home(key);
  let pending = lp_pending_tag(key);
  var slot = home;
  var probes = 0u;
  var first_tomb = NONE;
  var budget = params.max_probes * 4u + 64u;
  loop {
    if (budget == 0u) { return FAILED; }
    budget -= 1u;
    if (probes >= params.max_probes) {
      if (REUSE_TOMBS && first_tomb != NONE) {
        if (lp_claim(first_tomb, TOMB_TAG, key, value, pending)) { return INSERTED_IN_TOMB; }
        slot = home; probes = 0u; first_tomb = NONE;
        continue;
      }
      return FAILED;
    }
    let t = atomicLoad(&slots[4u * slot]);
    if (t == EMPTY_TAG) {
      if (REUSE_TOMBS && first_tomb != NONE) {
        if (lp_claim(first_tomb, TOMB_TAG, key, value, pending)) { return INSERTED_IN_TOMB; }
        slot = home; probes = 0u; first_tomb = NONE;
        continue;
      }
      if (lp_claim(slot, EMPTY_TAG, key, value, pending)) { return INSERTED; }
      continue;
    }
    if ((t | 1u) == (pending | 1u)) {
      if (t == pending) { continue; } // same fingerprint, still being written: it may be this key
      if (all(lp_key_at(slot) == key)) {
        if (assign) { atomicStore(&slots[4u * slot + 3u], value); }
        return EXISTED;
      }
    }
    if (REUSE_TOMBS && t == TOMB_TAG && first_tomb == NONE) { first_tomb = slot; }
    slot = (slot + 1u) & params.mask;
    probes += 1u;
  }
}

fn lp_erase(key: Key) -> bool {
  let ready = lp_pending_tag(key) | 1u;
  var slot = lp_home(key);
  for (var probes = 0u; probes < params.max_probes; probes += 1u) {
    let t = atomicLoad(&slots[4u * slot]);
    if (t == EMPTY_TAG) { return false; }
    if (t == ready && all(lp_key_at(slot) == key)) {
      let r = atomicCompareExchangeWeak(&slots[4u * slot], ready, TOMB_TAG);
      if (r.exchanged) { return true; }
      if (r.old_value == ready) { probes -= 1u; continue; }
      return false;
    }
    slot = (slot + 1u) & params.mask;
  }
  return false;
}

fn lp_find_atomic(key: Key) -> vec2<u32> {
  let ready = lp_pending_tag(key) | 1u;
  var slot = lp_home(key);
  for (var probes = 0u; probes < params.max_probes; probes += 1u) {
    let t = atomicLoad(&slots[4u * slot]);
    if (t == EMPTY_TAG) { break; }
    if (t == ready && all(lp_key_at(slot) == key)) { return vec2<u32>(atomicLoad(&slots[4u * slot + 3u]), 1u); }
    slot = (slot + 1u) & params.mask;
  }
  return vec2<u32>(0u, 0u);
}
`,
  { requires: [commonU64Module], needs: ['params', 'slots', 'REUSE_TOMBS'] },
);

const findU64Module = wgslModule(
  'linear-probe.find-u64',
  /* wgsl */ `
fn lp_find(key: Key) -> vec2<u32> {
  let ready = lp_pending_tag(key) | 1u;
  var slot = lp_home(key);
  for (var probes = 0u; probes < params.max_probes; probes += 1u) {
    let s = slots_ro[slot];
    if (s.x == EMPTY_TAG) { break; }
    if (s.x == ready && s.y == key.x && s.z == key.y) { return vec2<u32>(s.w, 1u); }
    slot = (slot + 1u) & params.mask;
  }
  return vec2<u32>(0u, 0u);
}
`,
  { requires: [commonU64Module], needs: ['params', 'slots_ro'] },
);

/** u64 keys: 16-byte slots (tag, lo, hi, value); no key is reserved. */
export const u64Layout: KeyLayout = {
  name: 'u64',
  wordsPerKey: 2,
  wordsPerSlot: 4,
  emptyWord: 0,
  slotType: 'vec4<u32>',
  findSlotType: 'vec4<u32>',
  common: commonU64Module,
  protocol: protocolU64Module,
  find: findU64Module,
  readKey: (i) => `vec2<u32>(keys[2u * (${i})], keys[2u * (${i}) + 1u])`,
  writeKey: (at, key) => `out_keys[2u * (${at})] = ${key}.x; out_keys[2u * (${at}) + 1u] = ${key}.y;`,
  isReserved: () => 'false',
};
