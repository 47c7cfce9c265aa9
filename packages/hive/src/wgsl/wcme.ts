import { unrolled, type WgslModule } from '@gpuhash/kernels';
import { HOME_SLOTS } from '../split-pointer';
import { cooperativeVariant } from './cooperative-variant';
import { overflowModule } from './overflow';

/**
 * A bucket's 32 slots are read by the S lanes of a cooperative group in 32/S steps: at step j,
 * lane L reads slot j*S + L (S >= 32: one step, lanes past 31 idle). `hv_row_ballot` turns a
 * per-step group ballot into the step's bits of a 32-bit slot mask, so every scan ends with the
 * same slot mask on every lane, whatever S is (S = 1 without subgroups).
 */
const rowBallotCode = /* wgsl */ `
fn hv_row_ballot(pred: bool, step: u32) -> u32 {
  let b = cg_ballot32(pred);
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
 * Slot updates over the writable table (`slots: array<atomic<u32>>`): the elected lane's CAS of a
 * key word, and publishing a pair. Brings `hv_row_ballot` along for the kernels that scan buckets
 * one at a time (cuckoo paths, splits).
 */
export function wcmeModule(subgroups: boolean): WgslModule {
  return cooperativeVariant(
    'hive.wcme',
    subgroups,
    /* wgsl */ `
/** Strong compare-exchange of the key word of global slot g. */
fn hv_cas_key(g: u32, expected: u32, desired: u32) -> bool {
  loop {
    let r = atomicCompareExchangeWeak(&slots[hv_kw(g)], expected, desired);
    if (r.exchanged) { return true; }
    if (r.old_value != expected) { return false; }
  }
}

/** Publishes a pair in a slot this invocation owns: the value first, so whoever sees the key sees its value. */
fn hv_store_pair(g: u32, key: u32, value: u32) {
  atomicStore(&slots[hv_vw(g)], value);
  atomicStore(&slots[hv_kw(g)], key);
}
`,
    { requires: [rowBallotModule(subgroups)], needs: ['slots'] },
  );
}

/**
 * Key lines each group loads before its first ballot, per kernel. On an H100 (2^27 slots,
 * 2026-11-27) against 8: pass A with 4 took a 2^22-op mixed batch 2% faster at loads 0.5 and 0.95
 * (16: slower), and erase batches with 16 were up to 2% faster (4: up to 3% slower). On an H200
 * (2026-11-22), 16 lost pass A more to the extra registers than it gained.
 */
export const PASS_A_LINES = 4;
export const ERASE_LINES = 16;

/**
 * WCME for every lane's op at once (the "transposed" scan). Each lane of a group of S <= 32 lanes
 * owns one op; the group reads the S ops' buckets one after the other, each bucket's 32 key words
 * cooperatively (lane L reads slots L, L + S, ...), but issues \`lines\` loads before the first
 * ballot (PASS_A_LINES, ERASE_LINES), so a group keeps that many lines in flight instead of one.
 * The ballots then give each op's owner its slot masks. (Finds do not use it: they probe lane by
 * lane, see find.ts.)
 */
function lanesScanCode(lines: number): string {
  // The loads of a round unrolled, not a loop over an array: an array indexed in a loop may live
  // in memory, and storing a load's result there waits for the load, one line at a time.
  const loads = unrolled(
    lines,
    (t) => `    var w${t} = EMPTY;
    { let t = t0 + ${t}u; let j = t >> shift; let b = cg_broadcast(bkt, j);
      if (((reading >> j) & 1u) != 0u) { w${t} = atomicLoad(&slots[hv_key_word(b, (t & (steps - 1u)) * cg_size() + cg_lane())]); } }`,
  );
  const ballots = unrolled(
    lines,
    (t) => `    { let t = t0 + ${t}u; let j = t >> shift; let step = t & (steps - 1u); let kj = cg_broadcast(key, j);
      let mx = hv_row_ballot(w${t} == kj, step);
      let my = hv_row_ballot(w${t} != kj && w${t} != EMPTY, step);
      if (cg_lane() == j && go) { r |= vec2<u32>(mx, my); } }`,
  );
  return /* wgsl */ `
fn hv_scan_lanes(bkt: u32, key: u32, go: bool) -> vec2<u32> {
  let steps = cg_steps(32u);
  let shift = firstTrailingBit(steps);
  let reading = cg_ballot32(go);
  var r = vec2<u32>(0u);
  // 32 (op, step) pairs for any S: S ops of 32 / S steps each, ${lines} loads issued before their ballots.
  for (var t0 = 0u; t0 < 32u; t0 += ${lines}u) {
${loads}
${ballots}
  }
  return r;
}`;
}

/**
 * The transposed scan over the writable table (atomic loads), for the op passes: x: slots of the
 * calling lane's bucket \`bkt\` holding its key; y: slots holding anything else but EMPTY (another
 * live key, or one retired in this batch). Lanes with \`go\` false read nothing and get zeros.
 * Every lane of the group calls it together.
 */
export function scanLanesModule(subgroups: boolean, lines: number): WgslModule {
  return cooperativeVariant(`hive.scan-lanes.${lines}`, subgroups, lanesScanCode(lines), {
    requires: [rowBallotModule(subgroups)],
    needs: ['slots'],
  });
}

/**
 * The lookup of the op passes and of erase batches, by the transposed scan: the group reads its
 * ops' first buckets; then the second buckets of the ops not found whose first bucket has
 * overflowed (otherwise the key can only be in the first), or, with \`full_to_b2\`, is full (an
 * insert's claim goes there); then the stash lines of those whose first bucket has sent keys to
 * the stash. at: the slot holding the key (NONE); r1, r2: the scans of the two buckets (see
 * \`hv_scan_lanes\`); scanned2: whether the second bucket was read. One call site in a loop:
 * the scan is unrolled, and three copies of it cost registers and occupancy. Every lane of the
 * group calls it together.
 */
const lookupLanesCode = /* wgsl */ `
struct HvLookup { at: u32, r1: vec2<u32>, r2: vec2<u32>, scanned2: bool }

fn hv_lookup_lanes(key: u32, go: bool, b1: u32, b2: u32, stash_live: bool, full_to_b2: bool) -> HvLookup {
  var placement = 0u;
  if (go) { placement = hv_placement(b1); }
  let spilled = (placement & OVERFLOW_BIT) != 0u;
  let stashed = (placement & STASH_BIT) != 0u;
  var l = HvLookup(NONE, vec2<u32>(0u), vec2<u32>(0u), false);
  for (var phase = 0u; phase < 3u; phase++) {
    var bucket = b1;
    var want = go;
    if (phase == 1u) {
      bucket = b2;
      want = go && l.at == NONE && b2 != b1 && (spilled || (full_to_b2 && (l.r1.x | l.r1.y) == 0xffffffffu));
      l.scanned2 = want;
    } else if (phase == 2u) {
      bucket = hv_stash_bucket(key);
      want = go && l.at == NONE && stash_live && stashed;
    }
    if (cg_ballot32(want) == 0u) { continue; }
    let r = hv_scan_lanes(bucket, key, want);
    if (want) {
      if (r.x != 0u) { l.at = bucket * 32u + firstTrailingBit(r.x); }
      if (phase == 0u) { l.r1 = r; } else if (phase == 1u) { l.r2 = r; }
    }
  }
  return l;
}`;

/** \`hv_lookup_lanes\` (needs \`slots\`, \`masks\` and \`params\`). */
export function lookupLanesModule(subgroups: boolean, lines: number): WgslModule {
  return cooperativeVariant(`hive.lookup-lanes.${lines}`, subgroups, lookupLanesCode, {
    requires: [scanLanesModule(subgroups, lines), overflowModule],
  });
}

/** Rounds of the home scan: S lanes read a home's HOME_SLOTS key words for each of S ops in HOME_SLOTS rounds of S words. */
const HOME_SCAN_ROUNDS = HOME_SLOTS;
const HOME_SHIFT = Math.log2(HOME_SLOTS);
const HOME_BITS = `0x${(2 ** HOME_SLOTS - 1).toString(16)}u`;

/** WCME over homes: the transposed scan on each op's home (one 32-byte sector) instead of its bucket. */
function homeScanCode(): string {
  // Round r: lane L reads key word (p mod HOME_SLOTS) of op p / HOME_SLOTS's home, p = r S + L.
  const loads = unrolled(
    HOME_SCAN_ROUNDS,
    (r) => `  var w${r} = TOMBSTONE;
  { let p = ${r}u * cg_size() + cg_lane(); let j = p >> ${HOME_SHIFT}u;
    let f = cg_broadcast(first, j);
    if (cg_broadcast(select(0u, 1u, go), j) != 0u) { w${r} = atomicLoad(&slots[hv_kw(f + (p & ${HOME_SLOTS - 1}u))]); } }`,
  );
  const ballots = unrolled(
    HOME_SCAN_ROUNDS,
    (r) => `  m |= hv_owner_bits(cg_ballot32(w${r} == cg_broadcast(key, (${r}u * cg_size() + cg_lane()) >> ${HOME_SHIFT}u)), ${r}u);`,
  );
  const emptyBallots = unrolled(HOME_SCAN_ROUNDS, (r) => `  e |= hv_owner_bits(cg_ballot32(w${r} == EMPTY), ${r}u);`);
  return /* wgsl */ `
/**
 * The bits (0..HOME_SLOTS-1) of a home's key words that round r's ballot holds for the calling
 * lane's op: op o's words sit at lanes HOME_SLOTS o - r S onwards (S the group size; a home spans
 * several rounds when S < HOME_SLOTS).
 */
fn hv_owner_bits(ballot: u32, r: u32) -> u32 {
  let sh = i32(HOME_SLOTS * cg_lane()) - i32(r * cg_size());
  if (sh >= 32 || sh <= -i32(HOME_SLOTS)) { return 0u; }
  if (sh >= 0) { return (ballot >> u32(sh)) & ${HOME_BITS}; }
  return (ballot << u32(-sh)) & ${HOME_BITS};
}

/**
 * The bits (0..HOME_SLOTS-1) of the calling lane's home key words (from global slot \`first\`)
 * holding its key: the group reads the homes of its ops together, every load issued before the
 * first ballot. Lanes with go false read nothing. Every lane of the group calls it. (A lane
 * reading its own home, 8 atomic loads of 4 bytes, was no faster with homes of 8 slots: atomic
 * loads are not combined, so 8 requests per op; perf-layout measured 8 such loads 7x slower than
 * 8 plain ones on an H200.)
 */
fn hv_scan_homes(first: u32, key: u32, go: bool) -> u32 {
${loads}
  var m = 0u;
${ballots}
  return m;
}

/** 1 when key, absent from its home, may be elsewhere: its away or far bit in its first bucket's lock word. */
fn hv_unsettled(word: u32, key: u32) -> u32 {
  return select(0u, 1u, hv_may_be_away(word, key) || (word & hv_far_bit(key)) != 0u);
}

/**
 * A key's lookup at its home in its first bucket b1, for the passes that settle what a home can
 * (the home pass, erase batches): the group's home scan, and each lane's lock word read beside it.
 * x: the global slot holding key at home, NONE if none; y: 1 when it is not there and its away or
 * far bit says it may be elsewhere (0: settled, found or absent). Every lane of the group calls it.
 */
fn hv_home_lookup(key: u32, b1: u32, go: bool) -> vec2<u32> {
  let first = b1 * 32u + hv_home(key) * HOME_SLOTS;
  var word = 0u;
  if (go) { word = atomicLoad(&masks[params.lock_base + b1]); }
  let m = hv_scan_homes(first, key, go);
  if (m != 0u) { return vec2<u32>(first + firstTrailingBit(m), 0u); }
  return vec2<u32>(NONE, hv_unsettled(word, key));
}

/**
 * hv_home_lookup for pass A's inserts, with the home's EMPTY key words: x, y as there; z: the
 * home's slots (bits 0..HOME_SLOTS-1) whose key word is EMPTY (free, or claimed and not yet
 * published). Every lane of the group calls it.
 */
fn hv_home_view(key: u32, b1: u32, go: bool) -> vec3<u32> {
  let first = b1 * 32u + hv_home(key) * HOME_SLOTS;
  var word = 0u;
  if (go) { word = atomicLoad(&masks[params.lock_base + b1]); }
${loads}
  var m = 0u;
  var e = 0u;
${ballots}
${emptyBallots}
  if (m != 0u) { return vec3<u32>(first + firstTrailingBit(m), 0u, 0u); }
  return vec3<u32>(NONE, hv_unsettled(word, key), e);
}`;
}

/** \`hv_scan_homes\`, \`hv_home_lookup\` and \`hv_home_view\` over the writable table (need \`slots\`, \`masks\` and \`params\`). */
export function homeScanModule(subgroups: boolean): WgslModule {
  return cooperativeVariant('hive.home-scan', subgroups, homeScanCode(), { needs: ['slots', 'masks', 'params'] });
}
