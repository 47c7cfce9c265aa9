import { fmix32Module, jenkinsModule, wgslModule } from '@gpuhash/kernels';
import { ALT_SALT, BCHT_SALT, ENTRIES, ENTRY_BITS, FUNCTIONS, KT } from '../geometry';
import { EMPTY_KEY, REMAP_KEY } from '../sentinels';

const hex = (v: number) => `0x${(v >>> 0).toString(16)}u`;

/**
 * Geometry and hashes every Horton kernel shares (the twins are in geometry.ts): sentinels,
 * primary bucket, tag, the secondary functions R_i and the BCHT mode's second bucket.
 */
export const hortonHashModule = wgslModule(
  'horton.hash',
  /* wgsl */ `
const EMPTY: u32 = ${hex(EMPTY_KEY)};
const REMAP: u32 = ${hex(REMAP_KEY)};
const NONE: u32 = 0xffffffffu;
const ENTRIES: u32 = ${ENTRIES}u;
const ENTRY_BITS: u32 = ${ENTRY_BITS}u;
const ENTRY_MASK: u32 = ${(1 << ENTRY_BITS) - 1}u;
const FUNCTIONS: u32 = ${FUNCTIONS}u;
const KT = array<u32, 8>(${KT.map(hex).join(', ')});

fn is_reserved(key: u32) -> bool { return key >= REMAP; }
fn primary_of(key: u32) -> u32 { return hash_jenkins(key ^ params.seed) & params.mask; }
fn tag_of(key: u32) -> u32 { return ((hash_fmix32(key ^ params.seed) >> 16u) * ENTRIES) >> 16u; }
fn secondary_of(x: u32, t: u32, i: u32) -> u32 {
  let ks = x * ENTRIES + t;
  return (hash_jenkins(ks ^ ${hex(ALT_SALT)}) + KT[ks & 7u] * i) & params.mask;
}
fn second_of(key: u32) -> u32 { return hash_fmix32(key ^ params.seed ^ ${hex(BCHT_SALT)}) & params.mask; }
// BCHT load balancing: a key's tie bucket, the one it takes of two equally loaded buckets, is its
// second when this bit (the second hash's top bit, which no mask reaches) is set: a fair coin
// apart from both buckets, so each hash function takes half the keys.
fn tie_to_second(key: u32) -> bool { return (hash_fmix32(key ^ params.seed ^ ${hex(BCHT_SALT)}) >> 31u) == 1u; }
// The key's (tie bucket, other bucket): its two BCHT buckets, the tie bucket first.
fn bcht_pair(key: u32) -> vec2<u32> {
  let first = primary_of(key);
  let second = second_of(key);
  if (tie_to_second(key)) { return vec2<u32>(second, first); }
  return vec2<u32>(first, second);
}
fn entry_of(rea: u32, t: u32) -> u32 { return (rea >> (ENTRY_BITS * t)) & ENTRY_MASK; }
fn with_entry(rea: u32, t: u32, e: u32) -> u32 {
  return (rea & ~(ENTRY_MASK << (ENTRY_BITS * t))) | (e << (ENTRY_BITS * t));
}
`,
  { requires: [jenkinsModule, fmix32Module], needs: ['params'] },
);

/**
 * Bucket access through the atomic view (`buckets: array<atomic<u32>>`, 16 words a bucket: slot s
 * has its key at word 2s and its value at 2s + 1; a Type B bucket has REMAP at word 14 and the
 * remap entries at word 15).
 */
export const bucketModule = wgslModule(
  'horton.bucket',
  /* wgsl */ `
fn key_at(b: u32, s: u32) -> u32 { return atomicLoad(&buckets[16u * b + 2u * s]); }
fn value_at(b: u32, s: u32) -> u32 { return atomicLoad(&buckets[16u * b + 2u * s + 1u]); }
// Every write goes through store_word: the planning pass of an insert round (PLAN) writes nothing.
fn store_word(i: u32, v: u32) { if (!PLAN) { atomicStore(&buckets[i], v); } }
fn put(b: u32, s: u32, key: u32, value: u32) {
  store_word(16u * b + 2u * s + 1u, value);
  store_word(16u * b + 2u * s, key);
}
fn store_value(b: u32, s: u32, value: u32) { store_word(16u * b + 2u * s + 1u, value); }
fn clear_slot(b: u32, s: u32) { store_word(16u * b + 2u * s, EMPTY); }
fn is_type_b(b: u32) -> bool { return key_at(b, 7u) == REMAP; }
fn rea_of(b: u32) -> u32 { return atomicLoad(&buckets[16u * b + 15u]); }
fn set_rea(b: u32, rea: u32) { store_word(16u * b + 15u, rea); }
// The slot of key in bucket b, or NONE. All 8 key words are compared: REMAP is never a user key.
fn slot_of(b: u32, key: u32) -> u32 {
  for (var s = 0u; s < 8u; s++) { if (key_at(b, s) == key) { return s; } }
  return NONE;
}
// The first free slot of b (a Type B bucket's last slot is never free), or NONE.
fn free_slot(b: u32) -> u32 {
  for (var s = 0u; s < 8u; s++) { if (key_at(b, s) == EMPTY) { return s; } }
  return NONE;
}
fn free_count(b: u32) -> u32 {
  var c = 0u;
  for (var s = 0u; s < 8u; s++) { if (key_at(b, s) == EMPTY) { c++; } }
  return c;
}
`,
  { requires: [hortonHashModule], needs: ['buckets', 'PLAN'] },
);
