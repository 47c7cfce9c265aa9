import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, failureListModule, gridModule, gridStrideLoop, workgroupAppendModule } from '@gpuhash/kernels';
import { ENTRIES, SLOTS } from '../geometry';
import { hortonHashModule } from './common';
import { talliesModule } from './insert';
import { hortonParams, WORKGROUP_SIZE } from './params';

/**
 * The bulk build: a large insert batch placed region by region in workgroup memory, then the
 * secondary keys placed with room hints. The fast pass costs one read of the primary bucket and
 * compare-exchanges in global memory per key, and at load 0.9 the seven keys a bucket gets on
 * average fight over its slots one compare-exchange at a time. Here the batch is first grouped by
 * region (a run of REGION_BUCKETS buckets, by the key's primary bucket):
 *   1. count: keys per region; with the plan (batches that take the table past load 0.8), per
 *      primary bucket too (a byte each), and then
 *   2. room: per bucket, its free slots less the keys the batch brings it (a byte each, written
 *      over step 1's bytes);
 *   3. scan the region counts into offsets (device-wide exclusive scan);
 *   4. scatter: (key, value, batch index) records grouped by region; reserved keys are reported;
 *   5. build: one workgroup per region loads its slots' keys into workgroup memory; each key looks
 *      for itself in its primary bucket (and, in a bucket that was Type B before the batch, in its
 *      remap bucket) and claims the first free slot by compare-exchange there: two copies of one
 *      key meet at one slot, as in the fast pass. Keys claim class by class, a barrier between:
 *      first keys whose tag an earlier key of the bucket has; then, with the plan, the first key of
 *      each tag of a bucket its batch overfills by how many of the tag's secondary buckets have
 *      room (none, one or two, more: step 2's bytes), then the rest. So the
 *      keys a bucket overflows with, which find all 8 slots taken and spill, have distinct tags and
 *      secondary buckets with room. Then per bucket, the paper's conversion: a bucket that
 *      overflowed and whose slot 7 this build filled turns Type B (unless it holds a secondary
 *      key): slot 7's key spills too and slot 7 becomes the remap entry array. The claimed slots
 *      go back to memory, and each bucket's free slots into a room hint (a byte per bucket);
 *   6. the spilled keys, secondary keys of Type B buckets, are placed by the spill pass
 *      (`spillPlaceKernel` with `hinted`): its least-loaded choice among an entry's 7 candidate
 *      buckets reads 7 hint bytes (16 MB at 2^27 slots, which the L2 cache holds) instead of 56
 *      key words, and each claim there takes one from the hint. Every primary key of the batch is
 *      placed (or spilled) before any secondary key, so a secondary key never takes a slot a
 *      primary key of the batch wants. What is left goes to the locked rounds.
 */
export const REGION_BUCKETS = 64;
const REGION_SLOTS = REGION_BUCKETS * SLOTS;
/** Records each lane of the build holds at once: a region's records at load 0.9 in one chunk. */
const RECORDS_PER_LANE = 2;
// The build loads and writes back a region's slots a few per invocation, and runs one invocation per bucket.
if (REGION_SLOTS % WORKGROUP_SIZE !== 0 || REGION_BUCKETS > WORKGROUP_SIZE)
  throw new Error('bulk.ts: a region is whole slots per invocation, and at most one bucket per invocation');

/** Bytes per record of the scatter (key, value, batch index, padding). */
export const BULK_RECORD_BYTES = 16;

const region = `(primary_of(key) / ${REGION_BUCKETS}u)`;

/**
 * Step 1. Bindings: params (n = batch), keys, counts (atomic, cleared: one per region); with the
 * plan, bucket_counts too (atomic, cleared: a byte per bucket, four a word). The bytes are 16 MB
 * at 2^27 slots, which the L2 cache holds (a word per bucket, 64 MB, would not). A bucket that
 * gets 256 keys or more carries into its neighbour's byte: the bytes only steer the claim
 * classes; the region counts, which place the records, are exact.
 */
export const bulkCountKernel = defineKernel({
  name: 'horton.bulk.count',
  workgroupSize: WORKGROUP_SIZE,
  variant: { perBucket: false },
  params: hortonParams,
  bindings: (v: { perBucket: boolean }) => ({
    params: uniform(),
    keys: storage('read', 'u32'),
    counts: storage('read_write', 'atomic<u32>'),
    ...(v.perBucket ? { bucket_counts: storage('read_write', 'atomic<u32>') } : {}),
  }),
  source: (decls, { perBucket }) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let key = keys[i];
    if (is_reserved(key)) { continue; }
    let x = primary_of(key);
    atomicAdd(&counts[x / ${REGION_BUCKETS}u], 1u);
    ${perBucket ? 'atomicAdd(&bucket_counts[x / 4u], 1u << (8u * (x % 4u)));' : ''}
  }
}`,
      { modules: [gridModule, hortonHashModule] },
    ),
});

/**
 * Step 2, per word of 4 buckets: each one's room (its free slots less the keys the batch brings it,
 * clamped to -128..127 and stored plus 128), written over step 1's count bytes. Bindings: params
 * (n = words, mask = buckets - 1), bucket_words (the buckets as 16-byte words, read), room (step
 * 1's bytes in, the room bytes out).
 */
export const bulkRoomKernel = defineKernel({
  name: 'horton.bulk.room',
  workgroupSize: WORKGROUP_SIZE,
  params: hortonParams,
  bindings: {
    params: uniform(),
    bucket_words: storage('read', 'vec4<u32>'),
    room: storage('read_write', 'u32'),
  },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('w', 'params.n', WORKGROUP_SIZE)} {
    let counts = room[w];
    var packed = 0u;
    for (var j = 0u; j < 4u; j++) {
      let b = 4u * w + j;
      var r = 0;
      if (b <= params.mask) {
        var free = 0;
        for (var q = 0u; q < 4u; q++) {
          let kv = bucket_words[4u * b + q];
          free += select(0, 1, kv.x == EMPTY) + select(0, 1, kv.z == EMPTY);
        }
        r = clamp(free - i32((counts >> (8u * j)) & 0xffu), -128, 127);
      }
      packed |= u32(r + 128) << (8u * j);
    }
    room[w] = packed;
  }
}`,
      { modules: [gridModule, hortonHashModule] },
    ),
});

/**
 * The plan's claim class of the first key of a tag in its bucket (see the build): in a bucket its
 * batch overfills, 0 when no secondary bucket of its tag has room left by the batch's primary keys,
 * 1 when one or two have, else 2; 2 in the other buckets. Reads step 2's room bytes (16 MB at 2^27
 * slots, which the L2 cache holds).
 */
const claimClassCode = /* wgsl */ `
fn room_byte(b: u32) -> i32 { return i32((room[b / 4u] >> (8u * (b % 4u))) & 0xffu) - 128; }
fn claim_class(key: u32) -> u32 {
  let x = primary_of(key);
  if (room_byte(x) >= 0) { return 2u; }
  let t = tag_of(key);
  var roomy = 0u;
  for (var i = 1u; i <= FUNCTIONS; i++) {
    let w = secondary_of(x, t, i);
    if (w != x && room_byte(w) > 0) { roomy++; }
  }
  return select(select(2u, 1u, roomy <= 2u), 0u, roomy == 0u);
}
`;

/**
 * Step 4. Bindings: params (n = batch), keys, values, cursors (the scanned counts; each ends as its
 * region's end offset), records (out: key, value, batch index), failed (reserved keys are reported
 * here, as the fast pass does).
 */
export const bulkScatterKernel = defineKernel({
  name: 'horton.bulk.scatter',
  workgroupSize: WORKGROUP_SIZE,
  params: hortonParams,
  bindings: {
    params: uniform(),
    keys: storage('read', 'u32'),
    values: storage('read', 'u32'),
    cursors: storage('read_write', 'atomic<u32>'),
    records: storage('read_write', 'vec4<u32>'),
    failed: storage('read_write', 'atomic<u32>'),
  },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let key = keys[i];
    if (is_reserved(key)) {
      report_failure(i | FAILURE_RESERVED);
      continue;
    }
    let at = atomicAdd(&cursors[${region}], 1u);
    records[at] = vec4<u32>(key, values[i], i, 0u);
  }
}`,
      { modules: [gridModule, hortonHashModule, failureListModule] },
    ),
});

/**
 * Step 5: one workgroup per region (grid-strided; the loop bounds come from \`ends\`, uniform per
 * workgroup, so the barriers are legal). Bindings: params (n = regions, mask = buckets - 1), slots
 * (the buckets as (key, value) pairs, plain: in this dispatch only the region's workgroup writes
 * its slots, and other workgroups read only keys that stay put), records, ends (region end
 * offsets), queue_out (the spilled keys' batch indices, word 0 counting), counters, hints (out: a
 * byte per bucket, its free slots); with the plan, room (step 2's bytes, read for the classes).
 */
export const bulkBuildKernel = defineKernel({
  name: 'horton.bulk.build',
  workgroupSize: WORKGROUP_SIZE,
  variant: { assign: false, plan: false },
  params: hortonParams,
  bindings: (v: { plan: boolean }) => ({
    params: uniform(),
    slots: storage('read_write', 'vec2<u32>'),
    records: storage('read', 'vec4<u32>'),
    ends: storage('read', 'u32'),
    queue_out: storage('read_write', 'atomic<u32>'),
    counters: storage('read_write', 'atomic<u32>'),
    hints: storage('read_write', 'u32'),
    ...(v.plan ? { room: storage('read', 'u32') } : {}),
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${v.plan ? claimClassCode : ''}
const RB: u32 = ${REGION_BUCKETS}u;
const RECORDS_PER_LANE: u32 = ${RECORDS_PER_LANE}u;
const CHUNK: u32 = ${RECORDS_PER_LANE * WORKGROUP_SIZE}u;
const CLASSES: u32 = 4u;
const INSERTED: u32 = 0u;
const EXISTED: u32 = 1u;
const SPILLED: u32 = 2u;
// The region's keys, 8 a bucket; the values of the slots that were free as the build began (their
// pairs go back at the end; the other slots' values stay in memory); per bucket, the slots free as
// the build began, the keys that found all 8 taken, and the batch index of the key that claimed
// slot 7. A slot the build claimed is one that was free and is not.
var<workgroup> region_keys: array<atomic<u32>, ${REGION_SLOTS}>;
var<workgroup> region_values: array<u32, ${REGION_SLOTS}>;
var<workgroup> was_free: array<u32, ${REGION_BUCKETS}>;
var<workgroup> overflow: array<atomic<u32>, ${REGION_BUCKETS}>;
var<workgroup> slot7_index: array<u32, ${REGION_BUCKETS}>;
// Keys of the region per (bucket, tag): a key whose tag an earlier key of its bucket has claims in
// the first class, so the keys a bucket overflows with have distinct tags where they can (a group of
// keys sharing an entry must fit in one secondary bucket; a CPU model of a build to 0.9 left 1% of
// the secondary keys without room this way against 3.2% by arrival order, 0.22% with the plan too:
// tools/gpu-check/src/horton-placement-model.ts).
var<workgroup> tag_keys: array<atomic<u32>, ${REGION_BUCKETS * ENTRIES}>;

// Stores the value of slot s of bucket x (local bucket lb): into workgroup memory when the slot was
// free as the build began (this build claimed it), else straight into memory. Copies of one key
// store in some order: one of their values is stored.
fn bulk_store_value(x: u32, lb: u32, s: u32, value: u32) {
  if ((was_free[lb] & (1u << s)) != 0u) { region_values[8u * lb + s] = value; }
  else { slots[8u * x + s].y = value; }
}

// Whether slot s of local bucket lb is slot 7 and this build claimed it: a copy of the key there
// spills too instead of counting as present, since a conversion may yet move that key out (and if
// it then found no room, the batch would report one copy failed while calling the other present).
fn bulk_claimed_slot7(lb: u32, s: u32) -> bool { return s == 7u && (was_free[lb] & 0x80u) != 0u; }

// Whether the key lives in the remap bucket of Type B bucket x (set before this batch; keys do not
// move during the build): assigns there when ASSIGN.
fn bulk_in_remap_bucket(x: u32, key: u32, value: u32) -> bool {
  let t = tag_of(key);
  let e = entry_of(slots[8u * x + 7u].y, t);
  if (e == 0u) { return false; }
  let y = secondary_of(x, t, e);
  for (var s = 0u; s < 8u; s++) {
    if (slots[8u * y + s].x == key) {
      if (ASSIGN) { slots[8u * y + s].y = value; }
      return true;
    }
  }
  return false;
}

// One key of the region: INSERTED, EXISTED or SPILLED (every slot taken; or, rarely, spurious
// compare-exchange failures used the budget: then it is not counted as overflowing).
fn bulk_place(key: u32, value: u32, index: u32, b0: u32) -> u32 {
  let x = primary_of(key);
  let lb = x - b0;
  let base = 8u * lb;
  var free = 0u;
  var found = NONE;
  for (var s = 0u; s < 8u; s++) {
    let k = atomicLoad(&region_keys[base + s]);
    if (k == key) { found = s; }
    if (k == EMPTY) { free |= 1u << s; }
  }
  if (found != NONE) {
    if (bulk_claimed_slot7(lb, found)) { return SPILLED; }
    if (ASSIGN) { bulk_store_value(x, lb, found, value); }
    return EXISTED;
  }
  if (atomicLoad(&region_keys[base + 7u]) == REMAP && bulk_in_remap_bucket(x, key, value)) { return EXISTED; }
  // Claims in slot order, only slots the read found free: during the build a slot only goes from
  // free to taken, so two copies of one key meet at the first either can take.
  var m = free;
  for (var budget = 0u; budget < 64u && m != 0u; budget++) {
    let s = countTrailingZeros(m);
    let c = atomicCompareExchangeWeak(&region_keys[base + s], EMPTY, key);
    if (c.exchanged) {
      region_values[base + s] = value;
      if (s == 7u) { slot7_index[lb] = index; }
      return INSERTED;
    }
    if (c.old_value == key) {
      if (bulk_claimed_slot7(lb, s)) { return SPILLED; }
      if (ASSIGN) { bulk_store_value(x, lb, s, value); }
      return EXISTED;
    }
    if (c.old_value != EMPTY) { m &= m - 1u; }
  }
  if (m == 0u) { atomicAdd(&overflow[lb], 1u); }
  return SPILLED;
}

// Whether local bucket lb holds, in a slot this build did not claim, a key of another primary bucket.
fn bulk_holds_secondary(lb: u32, x: u32) -> bool {
  for (var s = 0u; s < 7u; s++) {
    let k = atomicLoad(&region_keys[8u * lb + s]);
    if ((was_free[lb] & (1u << s)) == 0u && !is_reserved(k) && primary_of(k) != x) { return true; }
  }
  return false;
}

${entryPoint(WORKGROUP_SIZE)} {
  let buckets = params.mask + 1u;
  for (var r = grid_workgroup(wid, nwg); r < params.n; r += nwg.x * nwg.y) {
    var begin = 0u;
    if (r > 0u) { begin = ends[r - 1u]; }
    let end = ends[r];
    let b0 = r * RB;
    for (var li = lid; li < ${REGION_SLOTS}u; li += ${WORKGROUP_SIZE}u) {
      var k = EMPTY;
      if (b0 + li / 8u < buckets) { k = slots[8u * b0 + li].x; }
      atomicStore(&region_keys[li], k);
    }
    workgroupBarrier();
    if (lid < RB) {
      var free = 0u;
      for (var s = 0u; s < 8u; s++) {
        if (atomicLoad(&region_keys[8u * lid + s]) == EMPTY) { free |= 1u << s; }
      }
      was_free[lid] = free;
      atomicStore(&overflow[lid], 0u);
    }
    for (var j = lid; j < RB * ENTRIES; j += ${WORKGROUP_SIZE}u) { atomicStore(&tag_keys[j], 0u); }
    workgroupBarrier();
    // The region's records in chunks of RECORDS_PER_LANE a lane, so that the claim classes order
    // a whole chunk (at load 0.9 a region's records fit in one).
    let chunks = (end - begin + CHUNK - 1u) / CHUNK;
    for (var chunk = 0u; chunk < chunks; chunk++) {
      var recs: array<vec4<u32>, RECORDS_PER_LANE>;
      for (var k = 0u; k < RECORDS_PER_LANE; k++) {
        let p = begin + chunk * CHUNK + k * ${WORKGROUP_SIZE}u + lid;
        var rec = vec4<u32>(0u, 0u, 0u, CLASSES);
        if (p < end) {
          rec = records[p];
          let lb = primary_of(rec.x) - b0;
          // Class 0: a tag an earlier key of the bucket has; else 1 + the plan's class (keys of one
          // tag share their secondary buckets, so the first key's class stands for them all).
          rec.w = 0u;
          if (atomicAdd(&tag_keys[lb * ENTRIES + tag_of(rec.x)], 1u) == 0u) { rec.w = 1u + ${v.plan ? 'claim_class(rec.x)' : '2u'}; }
        }
        recs[k] = rec;
      }
      // Initialized here: declared without an initializer it was not zeroed again each chunk
      // (Dawn, on SwiftShader and on an H100).
      var spilled = array<bool, RECORDS_PER_LANE>();
      // Claims by class, a barrier between classes: the keys that overflow a bucket, which become
      // its secondary keys, are the ones whose secondary buckets have the most room.
      for (var cls = 0u; cls < CLASSES; cls++) {
        for (var k = 0u; k < RECORDS_PER_LANE; k++) {
          let rec = recs[k];
          if (rec.w == cls) {
            let placed = bulk_place(rec.x, rec.y, rec.z, b0);
            if (placed == INSERTED) { count(T_ADDED, 1u); }
            spilled[k] = placed == SPILLED;
          }
        }
        workgroupBarrier();
      }
      for (var k = 0u; k < RECORDS_PER_LANE; k++) { append_queue_out(spilled[k], recs[k].z, lid); }
    }
    workgroupBarrier();
    // The conversion (the paper's: only when no secondary key can move out; here, none is held):
    // a bucket that overflowed and whose slot 7 this build filled turns Type B.
    var evict = false;
    var evicted = 0u;
    if (lid < RB && b0 + lid < buckets && atomicLoad(&overflow[lid]) != 0u &&
        (was_free[lid] & 0x80u) != 0u && !bulk_holds_secondary(lid, b0 + lid)) {
      evict = true;
      evicted = slot7_index[lid];
      atomicStore(&region_keys[8u * lid + 7u], REMAP);
      region_values[8u * lid + 7u] = 0u;
      count(T_ERASED, 1u);
      count(T_TO_B, 1u);
    }
    append_queue_out(evict, evicted, lid);
    workgroupBarrier();
    for (var li = lid; li < ${REGION_SLOTS}u; li += ${WORKGROUP_SIZE}u) {
      let now = atomicLoad(&region_keys[li]);
      if (b0 + li / 8u < buckets && now != EMPTY && (was_free[li / 8u] & (1u << (li % 8u))) != 0u) {
        slots[8u * b0 + li] = vec2<u32>(now, region_values[li]);
      }
    }
    // Room hints, four buckets a word.
    if (lid < RB / 4u && b0 + 4u * lid < buckets) {
      var packed = 0u;
      for (var j = 0u; j < 4u; j++) {
        var f = 0u;
        for (var s = 0u; s < 8u; s++) {
          if (atomicLoad(&region_keys[32u * lid + 8u * j + s]) == EMPTY) { f++; }
        }
        packed |= f << (8u * j);
      }
      hints[b0 / 4u + lid] = packed;
    }
    workgroupBarrier();
  }
  flush_tallies(lid);
}`,
      {
        modules: [gridModule, hortonHashModule, talliesModule, workgroupAppendModule('queue_out')],
        constants: { ASSIGN: v.assign },
      },
    ),
});
