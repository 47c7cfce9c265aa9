import type { WgslModule } from '@gpuhash/kernels';
import { cooperativeVariant } from './kernel-cache';

/**
 * A bucket's 32 slots are read by the S lanes of a cooperative group in 32/S steps: at step j,
 * lane L reads slot j*S + L (S >= 32: one step, lanes past 31 idle). `hv_row_ballot` turns a
 * per-step group ballot into the step's bits of a 32-bit slot mask, so every scan ends with the
 * same slot mask on every lane, whatever S is (S = 1 without subgroups).
 */
const rowBallotCode = /* wgsl */ `
fn hv_row_ballot(pred: bool, step: u32) -> u32 {
  let b = cg_ballot(pred).x;
  let s = cg_size();
  if (s >= 32u) { return b; }
  return (b & ((1u << s) - 1u)) << (step * s);
}
`;

/** `hv_row_ballot` alone (kernels that read rows through their own bindings). */
export function rowBallotModule(subgroups: boolean): WgslModule {
  return cooperativeVariant('hive.row-ballot', subgroups, rowBallotCode);
}

/**
 * WCME over the writable table (`slots: array<atomic<u32>>`): every lane reads its slots, one
 * group ballot per step turns the comparisons into slot masks, and callers elect the first match.
 */
export function wcmeModule(subgroups: boolean): WgslModule {
  return cooperativeVariant(
    'hive.wcme',
    subgroups,
    /* wgsl */ `
/** x: slots of bucket b holding key; y: slots holding another live key. */
fn hv_scan(b: u32, key: u32) -> vec2<u32> {
  var r = vec2<u32>(0u, 0u);
  for (var step = 0u; step < cg_steps(32u); step++) {
    let slot = step * cg_size() + cg_lane();
    var k = EMPTY;
    if (slot < 32u) { k = atomicLoad(&slots[hv_key_word(b, slot)]); }
    r.x |= hv_row_ballot(k == key, step);
    r.y |= hv_row_ballot(k != key && k < TOMBSTONE, step);
  }
  return r;
}

/** The first slot of bucket b holding key, or NONE; stops at the first step that finds it. */
fn hv_find_slot(b: u32, key: u32) -> u32 {
  for (var step = 0u; step < cg_steps(32u); step++) {
    let slot = step * cg_size() + cg_lane();
    var k = EMPTY;
    if (slot < 32u) { k = atomicLoad(&slots[hv_key_word(b, slot)]); }
    let m = cg_ballot(slot < 32u && k == key);
    if (!cg_mask_empty(m)) { return step * cg_size() + cg_first_lane(m); }
  }
  return NONE;
}

/** Over the slots of \`mask\` only: x: those holding key; y: those still claimed but unpublished (EMPTY). */
fn hv_check(b: u32, key: u32, mask: u32) -> vec2<u32> {
  var r = vec2<u32>(0u, 0u);
  for (var step = 0u; step < cg_steps(32u); step++) {
    let slot = step * cg_size() + cg_lane();
    var k = TOMBSTONE;
    if (slot < 32u && ((mask >> slot) & 1u) == 1u) { k = atomicLoad(&slots[hv_key_word(b, slot)]); }
    r.x |= hv_row_ballot(k == key, step);
    r.y |= hv_row_ballot(k == EMPTY, step);
  }
  return r;
}

/** Strong compare-exchange of the key word of global slot g. */
fn hv_cas_key(g: u32, expected: u32, desired: u32) -> bool {
  loop {
    let r = atomicCompareExchangeWeak(&slots[g * 2u], expected, desired);
    if (r.exchanged) { return true; }
    if (r.old_value != expected) { return false; }
  }
}

/** Publishes a pair in a slot this invocation owns: the value first, so whoever sees the key sees its value. */
fn hv_store_pair(g: u32, key: u32, value: u32) {
  atomicStore(&slots[g * 2u + 1u], value);
  atomicStore(&slots[g * 2u], key);
}

/** Copies the pair at global slot \`from\` to global slot \`to\` (value first). */
fn hv_move(src: u32, dst: u32) {
  hv_store_pair(dst, atomicLoad(&slots[src * 2u]), atomicLoad(&slots[src * 2u + 1u]));
}
`,
    [rowBallotModule(subgroups)],
  );
}

/**
 * WCME over the read-only view of the table (`slots_ro: array<vec2<u32>>`), for find dispatches
 * that write nothing: each lane reads its slot's key and value with one plain 8-byte load, and the
 * first lane that matches hands its value to the group.
 */
export function lookupModule(subgroups: boolean): WgslModule {
  return cooperativeVariant(
    'hive.lookup',
    subgroups,
    /* wgsl */ `
/** x: the value of key in bucket b, y: 1 when found. */
fn hv_lookup(b: u32, key: u32) -> vec2<u32> {
  for (var step = 0u; step < cg_steps(32u); step++) {
    let slot = step * cg_size() + cg_lane();
    var s = vec2<u32>(EMPTY, 0u);
    if (slot < 32u) { s = slots_ro[b * 32u + slot]; }
    let m = cg_ballot(slot < 32u && s.x == key);
    if (!cg_mask_empty(m)) { return vec2<u32>(cg_broadcast(s.y, cg_first_lane(m)), 1u); }
  }
  return vec2<u32>(0u, 0u);
}
`,
    [],
  );
}
