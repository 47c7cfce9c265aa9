import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { HOME_SLOTS } from '../split-pointer';
import { commonModule, WORKGROUP_SIZE } from './common';
import { hiveParams } from './params';
import { ONE_WINDOW, type SlotWindows, slotsBinding, slotWindows } from './windows';

/**
 * The bulk build: a large insert batch placed region by region in workgroup memory. Pass A spends
 * most of its time on scattered global traffic: a line scan, a free-mask atomic and two stores per
 * key, each in a different random place. Here the batch is first partitioned by region (a run of
 * `REGION_BUCKETS` buckets, by the key's first bucket):
 *   1. count: keys per region; with the overflow plan (below), per first bucket, and then
 *   2. room: per bucket, its free slots less the keys that count brought it (the room keys sent
 *      on to it will find), one byte each, with a histogram of it; and the counts per region;
 *   3. scan the region counts into region offsets (device-wide exclusive scan);
 *   4. scatter: pairs grouped by region, each with its batch index and, with the plan, the room
 *      byte of its second bucket (one 16-byte record: one scattered store, not two);
 *   5. build: one workgroup per region loads its buckets' keys, free masks and lock words into
 *      workgroup memory, runs the same protocol there as pass A (look for the key in its home,
 *      and in the rest of its first bucket when its away bit is set; claim a home slot first with
 *      an atomicAnd on the mask, store the value straight into the slots buffer, publish, check
 *      the claims made before it in the round for a twin of the key), and writes the keys back
 *      with coalesced stores;
 *   6. spill: keys the region cannot settle (first bucket full, or flagged as having sent keys to
 *      their second bucket or the stash, so the key may live there) go through the ordinary op
 *      passes (A, release, B) by batch index, in "listed" mode, one dispatch each (the dispatcher's
 *      encodeSpillPasses); the scatter adds reserved keys to the spill, for pass A to report.
 * The overflow plan: which keys of a bucket that its batch overfills go on to their second bucket.
 * Left to the order of the claims, a key whose second bucket is full as well waits for pass B's
 * cuckoo eviction (at load 0.95, 40% of the keys sent on: 2.2% of a build from empty, 4.1 of its
 * 18.4 ms on an H200). Instead, the overfilled bucket's first keys whose second bucket has room
 * for at least `bar` more (its room byte, from step 2) go on, as many as it overflows by, and the
 * others claim. The bar is the highest at which the bucket's keys would bring twice its overflow
 * if their second buckets' room was distributed as the table's (a histogram of the room bytes,
 * from step 2): a CPU model of a build to 0.95 then leaves pass B 5% of the keys it leaves with
 * claim order, and sending on the keys with the most room first, which needs a histogram per
 * bucket before the claims, 10%.
 */
export const REGION_BUCKETS = 32;
/**
 * Words of a bucket's keys in workgroup memory: its 32 and one of padding, so that lanes reading
 * the same slot of different buckets hit different banks (32 apart, they all hit one bank and the
 * reads go one at a time). Values do not go through workgroup memory: a claim stores its value
 * straight into the slots buffer, into the region's buckets, which stay in the L2 while the
 * workgroup fills them. Halving the workgroup memory so (9 to 4.8 KB) made inserts to load 0.95
 * 5% faster on an H200 (15.0 to 14.2 ms, 2^27 slots); keeping the values there and adding 4 KB for
 * the twin check made them 9% slower (14.9 to 16.3 ms).
 */
const PADDED_BUCKET = 33;
if (REGION_BUCKETS * 8 !== WORKGROUP_SIZE) throw new Error("bulk.ts loads a region's keys as one 16-byte word per invocation");
if (HOME_SLOTS % 4 !== 0) throw new Error('bulk.ts loads 4 keys of a home as consecutive words: HOME_SLOTS must be a multiple of 4');
/** Room bins of the overflow plan: a bucket's room 0 or less, 1, .. ROOM_BINS - 1 or more. */
export const ROOM_BINS = 16;
/** The plan's bar: the keys over it should number this many times the bucket's overflow. */
export const PLAN_MARGIN = 2;
/**
 * Batches that may take the table past this load run with the plan. Below it few buckets
 * overflow, and counting per bucket (a 16 MB array of counters at 2^27 slots, against 512 KB per
 * region) cost a build to load 0.5 8% on an H200.
 */
export const PLAN_FROM_LOAD = 0.8;
/** Workgroup memory of the build: keys, masks and lock words of a region, and its overflow plan. */
export const BULK_WORKGROUP_BYTES = 4 * (PADDED_BUCKET * REGION_BUCKETS + 5 * REGION_BUCKETS + ROOM_BINS + 1);
/** Bytes per key of the scatter's records (key, value, batch index, and with the plan the second bucket's room byte). */
export const BULK_RECORD_BYTES = 16;

const region = `(hv_b1(key) / ${REGION_BUCKETS}u)`;

/**
 * Partitions of at most this many regions (tables of up to 2^22 slots) count and scatter in
 * workgroup memory first (16 KB of counters): a workgroup takes LOCAL_CHUNK keys at a time and adds
 * each region's total to the global counter once. In a small table every key's global atomic lands
 * on one of a few thousand counters, a few cache lines, and those atomics queue one behind the
 * other (at 2^20 slots, 1024 regions, the count and scatter passes took 0.05 and 0.07 ms on an
 * H100, about what the 131,072 regions of 2^27 slots cost).
 */
export const LOCAL_REGIONS = 4096;
/**
 * Keys per lane of a workgroup's chunk in the local partition, and the chunks: large for the
 * count (fewer totals to add), small for the scatter, whose workgroups hold a rank per key and wait
 * on each region's offset (on an H100, builds of 2^20 and 2^22 slots were fastest with 8 keys a
 * lane for the scatter, against 16 and 32; the count passes were fastest with 32).
 */
const LOCAL_COUNT_PER_LANE = 32;
const LOCAL_SCATTER_PER_LANE = 8;
export const LOCAL_COUNT_CHUNK = WORKGROUP_SIZE * LOCAL_COUNT_PER_LANE;
export const LOCAL_SCATTER_CHUNK = WORKGROUP_SIZE * LOCAL_SCATTER_PER_LANE;

/** The local partition's chunk loop: uniform per workgroup (barriers inside are legal). */
const localChunks = (chunk: number) =>
  `for (var base = grid_workgroup(wid, nwg) * ${chunk}u; base < params.n; base += nwg.x * nwg.y * ${chunk}u)`;

/** Words of room bytes for a partition of \`regions\` regions; the room histogram's ROOM_BINS words follow them. */
export function roomWords(regions: number): number {
  return (regions * REGION_BUCKETS) / 4;
}

/**
 * Reading step 2's room bytes (needs a \`room: array<u32>\` binding): bucket b's room r
 * (-128..127, free slots less its keys in the batch) is stored as r + 128, four buckets a word.
 */
const roomBytesCode = /* wgsl */ `
fn hv_room_byte(b: u32) -> u32 { return (room[b / 4u] >> (8u * (b % 4u))) & 0xffu; }
fn hv_room_of(byte: u32) -> i32 { return i32(byte) - 128; }`;

/**
 * Bindings: params (n = batch; aux0 = regions with \`local\`), keys, counts (atomic, cleared: one
 * per first bucket, or per region unless \`perBucket\`). \`local\` (per region, at most
 * LOCAL_REGIONS): counted in workgroup memory over the workgroup's chunks, then added once.
 */
export const bulkCountKernel = defineKernel({
  name: 'hive.bulk.count',
  workgroupSize: WORKGROUP_SIZE,
  variant: { perBucket: false, local: false },
  params: hiveParams,
  bindings: { params: uniform(), keys: storage('read', 'u32'), counts: storage('read_write', 'atomic<u32>') },
  source: (decls, { perBucket, local }) =>
    composeWgsl(
      local
        ? /* wgsl */ `
${decls}
var<workgroup> wg_counts: array<atomic<u32>, ${LOCAL_REGIONS}>;
${entryPoint(WORKGROUP_SIZE)} {
  let regions = params.aux0;
  for (var r = lid; r < regions; r += ${WORKGROUP_SIZE}u) { atomicStore(&wg_counts[r], 0u); }
  workgroupBarrier();
  ${localChunks(LOCAL_COUNT_CHUNK)} {
    for (var k = 0u; k < ${LOCAL_COUNT_PER_LANE}u; k++) {
      let i = base + k * ${WORKGROUP_SIZE}u + lid;
      if (i >= params.n) { break; }
      let key = keys[i];
      if (key < TOMBSTONE) { atomicAdd(&wg_counts[${region}], 1u); }
    }
  }
  workgroupBarrier();
  for (var r = lid; r < regions; r += ${WORKGROUP_SIZE}u) {
    let c = atomicLoad(&wg_counts[r]);
    if (c != 0u) { atomicAdd(&counts[r], c); }
  }
}`
        : /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let key = keys[i];
    if (key < TOMBSTONE) { atomicAdd(&counts[${perBucket ? 'hv_b1(key)' : region}], 1u); }
  }
}`,
      { modules: [gridModule, commonModule] },
    ),
});

/**
 * Step 2, per word of 4 buckets: each one's room (free slots less its count, clamped to -128..127,
 * stored plus 128 in a byte), the counts added to their region's, and the table's histogram of
 * room bins (ROOM_BINS words after the n words of room bytes, cleared). Bindings: params (n =
 * words, aux0 = table buckets), masks, counts (per bucket), room (out), region counts (atomic,
 * cleared).
 */
export const bulkRoomKernel = defineKernel({
  name: 'hive.bulk.room',
  workgroupSize: WORKGROUP_SIZE,
  params: hiveParams,
  bindings: {
    params: uniform(),
    masks: storage('read', 'u32'),
    counts: storage('read', 'u32'),
    room: storage('read_write', 'atomic<u32>'),
    region_counts: storage('read_write', 'atomic<u32>'),
  },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> bins: array<atomic<u32>, ${ROOM_BINS}>;
${entryPoint(WORKGROUP_SIZE)} {
  if (lid < ${ROOM_BINS}u) { atomicStore(&bins[lid], 0u); }
  workgroupBarrier();
  ${gridStrideLoop('w', 'params.n', WORKGROUP_SIZE)} {
    var packed = 0u;
    var sum = 0u;
    for (var j = 0u; j < 4u; j++) {
      let b = 4u * w + j;
      var r = 0;
      if (b < params.aux0) {
        let c = counts[b];
        sum += c;
        r = clamp(i32(countOneBits(masks[b])) - i32(min(c, 255u)), -128, 127);
        atomicAdd(&bins[u32(clamp(r, 0, ${ROOM_BINS - 1}))], 1u);
      }
      packed |= u32(r + 128) << (8u * j);
    }
    atomicStore(&room[w], packed);
    if (sum != 0u) { atomicAdd(&region_counts[w / ${REGION_BUCKETS / 4}u], sum); }
  }
  workgroupBarrier();
  if (lid < ${ROOM_BINS}u) {
    let c = atomicLoad(&bins[lid]);
    if (c != 0u) { atomicAdd(&room[params.n + lid], c); }
  }
}`,
      { modules: [gridModule, commonModule] },
    ),
});

/**
 * Bindings: params (n = batch, aux0 = regions with \`local\`, aux1: 1 with the overflow plan), keys,
 * values, cursors (the scanned counts, atomic; each ends as its region's end offset), records
 * (out: key, value, batch index, and with the plan the room byte of the key's second bucket), spill
 * (reserved keys go there, for pass A to report as it reports them in any batch), room (step 2's;
 * read with the plan). \`local\` (at most LOCAL_REGIONS regions): per chunk, each key's rank in its
 * region among the chunk's keys in workgroup memory, one global atomic per region for the chunk's
 * offset, then the records.
 */
export const bulkScatterKernel = defineKernel({
  name: 'hive.bulk.scatter',
  workgroupSize: WORKGROUP_SIZE,
  variant: { local: false },
  params: hiveParams,
  bindings: {
    params: uniform(),
    keys: storage('read', 'u32'),
    values: storage('read', 'u32'),
    cursors: storage('read_write', 'atomic<u32>'),
    records: storage('read_write', 'vec4<u32>'),
    spill: storage('read_write', 'atomic<u32>'),
    room: storage('read', 'u32'),
  },
  source: (decls, { local }) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${roomBytesCode}
// The record of key i (plan: with the room byte of its second bucket, which the build would
// otherwise wait for in its round).
fn hv_record(key: u32, i: u32, plan: bool) -> vec4<u32> {
  var room2 = 0u;
  if (plan) { room2 = hv_room_byte(hv_b2(key)); }
  return vec4<u32>(key, values[i], i, room2);
}
fn hv_spill(i: u32) { atomicStore(&spill[1u + atomicAdd(&spill[0], 1u)], i); }
${
  local
    ? /* wgsl */ `
var<workgroup> wg_counts: array<atomic<u32>, ${LOCAL_REGIONS}>;
${entryPoint(WORKGROUP_SIZE)} {
  let plan = params.aux1 != 0u;
  let regions = params.aux0;
  ${localChunks(LOCAL_SCATTER_CHUNK)} {
    for (var r = lid; r < regions; r += ${WORKGROUP_SIZE}u) { atomicStore(&wg_counts[r], 0u); }
    workgroupBarrier();
    var rank: array<u32, ${LOCAL_SCATTER_PER_LANE}>;
    for (var k = 0u; k < ${LOCAL_SCATTER_PER_LANE}u; k++) {
      rank[k] = 0xffffffffu;
      let i = base + k * ${WORKGROUP_SIZE}u + lid;
      if (i >= params.n) { continue; }
      let key = keys[i];
      if (key >= TOMBSTONE) { hv_spill(i); }
      else { rank[k] = atomicAdd(&wg_counts[${region}], 1u); }
    }
    workgroupBarrier();
    // Each region's count becomes the chunk's offset in it.
    for (var r = lid; r < regions; r += ${WORKGROUP_SIZE}u) {
      let c = atomicLoad(&wg_counts[r]);
      if (c != 0u) { atomicStore(&wg_counts[r], atomicAdd(&cursors[r], c)); }
    }
    workgroupBarrier();
    for (var k = 0u; k < ${LOCAL_SCATTER_PER_LANE}u; k++) {
      if (rank[k] == 0xffffffffu) { continue; }
      let i = base + k * ${WORKGROUP_SIZE}u + lid;
      let key = keys[i];
      records[atomicLoad(&wg_counts[${region}]) + rank[k]] = hv_record(key, i, plan);
    }
    workgroupBarrier();
  }
}`
    : /* wgsl */ `
${entryPoint(WORKGROUP_SIZE)} {
  let plan = params.aux1 != 0u;
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let key = keys[i];
    if (key >= TOMBSTONE) {
      hv_spill(i);
      continue;
    }
    // The record (its room byte read) before the cursor's atomic, as the two round trips overlap.
    let record = hv_record(key, i, plan);
    records[atomicAdd(&cursors[${region}], 1u)] = record;
  }
}`
}`,
      { modules: [gridModule, commonModule] },
    ),
});

/**
 * One workgroup per region (grid-strided, uniform per workgroup so the barriers are legal); the
 * region's keys in rounds of one per invocation, a barrier between claiming and checking. Bindings:
 * params (n = regions, aux0 = table buckets, aux1: 1 with the overflow plan, mode: 0 insert, 1
 * insertOrAssign), slots (as 16-byte words) and masks (plain: nothing else touches the table in
 * this dispatch), records, ends (region end offsets), counters, spill (word 0: count; then batch
 * indices), room (step 2's; read with the plan).
 */
export const bulkBuildKernel = defineKernel({
  name: 'hive.bulk.build',
  workgroupSize: WORKGROUP_SIZE,
  variant: ONE_WINDOW,
  params: hiveParams,
  bindings: (v: SlotWindows) => ({
    params: uniform(),
    slots: slotsBinding('read_write', 'vec4<u32>', v),
    masks: storage('read_write', 'u32'),
    records: storage('read', 'vec4<u32>'),
    ends: storage('read', 'u32'),
    counters: storage('read_write', 'atomic<u32>'),
    spill: storage('read_write', 'atomic<u32>'),
    room: storage('read', 'u32'),
  }),
  source: (decls, w) =>
    composeWgsl(
      /* wgsl */ `
${decls}

const RB: u32 = ${REGION_BUCKETS}u;
const PB: u32 = ${PADDED_BUCKET}u;
const ROOM_BINS: u32 = ${ROOM_BINS}u;
// The region's keys, PB words a bucket; its masks and lock words.
var<workgroup> region_words: array<atomic<u32>, ${PADDED_BUCKET * REGION_BUCKETS}>;
var<workgroup> region_masks: array<atomic<u32>, ${REGION_BUCKETS}>;
var<workgroup> region_locks: array<atomic<u32>, ${REGION_BUCKETS}>;
// The free masks as a round begins: a slot free then and taken before my claim was claimed in
// this round, so only those can hold a twin of my key that my lookup could not see.
var<workgroup> round_free: array<u32, ${REGION_BUCKETS}>;
var<workgroup> wg_added: atomic<u32>;
// The overflow plan: the table's buckets with room of at least v (v < ROOM_BINS, from the
// histogram of step 2); per bucket of the region, the room a key's second bucket needs for the key
// to go on (ROOM_BINS: none goes on), and how many more may.
var<workgroup> room_at_least: array<u32, ${ROOM_BINS}>;
var<workgroup> plan_bar: array<u32, ${REGION_BUCKETS}>;
var<workgroup> plan_quota: array<atomic<i32>, ${REGION_BUCKETS}>;

${roomBytesCode}
/**
 * The plan's bar for a bucket with \`free\` free slots that its \`count\` keys overfill: the highest
 * room v for which the keys whose second bucket has at least v would number PLAN_MARGIN times the
 * overflow, were the second buckets' room distributed as the table's (at least 1).
 */
fn hv_plan_bar(free: u32, count: u32, buckets: u32) -> u32 {
  let need = f32(${PLAN_MARGIN}u * (count - free)) * f32(buckets);
  var bar = 1u;
  for (var v = 2u; v < ROOM_BINS; v++) {
    if (f32(count) * f32(room_at_least[v]) >= need) { bar = v; }
  }
  return bar;
}
/** Whether the plan sends a key absent from its first bucket lb on, its second bucket's room byte room2 (from its record). */
fn hv_goes_on(lb: u32, room2: u32) -> bool {
  let bar = plan_bar[lb];
  if (bar >= ROOM_BINS || hv_room_of(room2) < i32(bar)) { return false; }
  return atomicSub(&plan_quota[lb], 1) > 0;
}

/**
 * Stores the value of global slot g: one component of a 16-byte word of the slots buffer, a 4-byte
 * store. (The slots binding is plain 16-byte words, so a home's keys load and store as one word:
 * four atomic loads and stores a home, which are not combined, made inserts to 0.5 5% slower.)
 */
fn hv_store_value(g: u32, value: u32) {
  let w = hv_vw(g);
  slots[w / 4u][w % 4u] = value;
}

/** The slot of bucket lb (region-local) holding key: its home's HOME_SLOTS first, the others when \`whole\`; NONE if none. */
fn hv_region_find(lb: u32, key: u32, home: u32, whole: bool) -> u32 {
  var at = NONE;
  let count = select(HOME_SLOTS, 32u, whole);
  for (var t = 0u; t < count; t++) {
    let s = (home * HOME_SLOTS + t) % 32u;
    if (atomicLoad(&region_words[lb * PB + s]) == key) { at = s; }
  }
  return at;
}

${entryPoint(WORKGROUP_SIZE)} {
  let assign = params.mode == OP_INSERT_OR_ASSIGN;
  let plan = params.aux1 != 0u;
  var added = 0u;
  if (plan && lid < ROOM_BINS) {
    var c = 0u;
    // The histogram follows the room bytes' words (roomWords), REGION_BUCKETS / 4 per region.
    for (var v = lid; v < ROOM_BINS; v++) { c += room[params.n * ${REGION_BUCKETS / 4}u + v]; }
    room_at_least[lid] = c;
  }
  workgroupBarrier();
  for (var r = grid_workgroup(wid, nwg); r < params.n; r += nwg.x * nwg.y) {
    var begin = 0u;
    if (r > 0u) { begin = ends[r - 1u]; }
    let end = ends[r];
    if (begin == end) { continue; }
    let b0 = r * RB;
    // The region's keys, a home's 4 keys (16 bytes) per invocation, 8 a bucket, all four loads
    // issued before the first store to workgroup memory.
    let kb = lid / 8u;
    let kw = 4u * (lid % 8u);
    let kin = b0 + kb < params.aux0;
    // Its 16-byte word in the slots buffer (a home's keys start on a 16-byte boundary).
    let kq = hv_key_word(b0 + kb, kw) / 4u;
    var k4 = vec4<u32>(EMPTY);
    if (kin) { k4 = slots[kq]; }
    var mask = 0u;
    var lock = 0u;
    var over = 0;
    let edge = lid < RB && b0 + lid < params.aux0;
    if (edge) {
      mask = masks[b0 + lid];
      lock = masks[params.lock_base + b0 + lid];
      if (plan) { over = -hv_room_of(hv_room_byte(b0 + lid)); }
    }
    atomicStore(&region_words[kb * PB + kw], k4.x);
    atomicStore(&region_words[kb * PB + kw + 1u], k4.y);
    atomicStore(&region_words[kb * PB + kw + 2u], k4.z);
    atomicStore(&region_words[kb * PB + kw + 3u], k4.w);
    if (lid < RB) {
      atomicStore(&region_masks[lid], mask);
      atomicStore(&region_locks[lid], lock);
      // A flagged bucket sends all its keys on anyway.
      var bar = ROOM_BINS;
      if (over > 0 && (lock & (OVERFLOW_BIT | STASH_BIT)) == 0u) {
        let free = countOneBits(mask);
        bar = hv_plan_bar(free, free + u32(over), params.aux0);
      }
      plan_bar[lid] = bar;
      atomicStore(&plan_quota[lid], max(over, 0));
    }
    workgroupBarrier();
    let rounds = (end - begin + ${WORKGROUP_SIZE - 1}u) / ${WORKGROUP_SIZE}u;
    for (var round = 0u; round < rounds; round++) {
      if (lid < RB) { round_free[lid] = atomicLoad(&region_masks[lid]); }
      workgroupBarrier();
      let p = begin + round * ${WORKGROUP_SIZE}u + lid;
      var claimed = false;
      var key = EMPTY;
      var value = 0u;
      var lb = 0u;
      var slot = 0u;
      var before = 0u;
      if (p < end) {
        let kv = records[p];
        key = kv.x;
        value = kv.y;
        lb = hv_b1(key) - b0;
        // A key whose first bucket has sent keys on may live in its second bucket or the stash.
        var spilled = (atomicLoad(&region_locks[lb]) & (OVERFLOW_BIT | STASH_BIT)) != 0u;
        if (!spilled) {
          // The key's home, and the rest of its bucket only when its away bit says it may be
          // there (a key that left its home set it, in an earlier batch or round). Scanning all
          // 32 slots for every key made builds a third slower (H200, 2026-11-22).
          let home = hv_home(key);
          let whole = hv_may_be_away(atomicLoad(&region_locks[lb]), key);
          let found = hv_region_find(lb, key, home, whole);
          spilled = found == NONE && hv_goes_on(lb, kv.w);
          var m = atomicLoad(&region_masks[lb]);
          loop {
            if (found != NONE || spilled) { break; }
            let pick = hv_pick_slot(m, home);
            if (pick == 0u) {
              spilled = true;
              break;
            }
            let old = atomicAnd(&region_masks[lb], ~pick);
            if ((old & pick) != 0u) {
              slot = firstTrailingBit(pick);
              // Claimed in this round before mine: only these can hold a twin I did not see. A
              // twin picked as I did, the first free slot from our home's first in order, from a
              // free mask that held at least what mine held (mine among them): so a slot at or
              // before mine in that order.
              before = ~old & round_free[lb] & hv_pick_prefix(home, slot);
              claimed = true;
              break;
            }
            m = old;
          }
          if (claimed) {
            hv_store_value((b0 + lb) * 32u + slot, value);
            atomicStore(&region_words[lb * PB + slot], key);
          } else if (found != NONE && assign) {
            hv_store_value((b0 + lb) * 32u + found, value);
          }
        }
        if (spilled) {
          let at = atomicAdd(&spill[0], 1u);
          atomicStore(&spill[1u + at], kv.z);
        }
      }
      workgroupBarrier();
      // Every claim of this round is published: a slot claimed before mine holding the key is a
      // twin's, and the earliest claim wins.
      if (claimed) {
        var twin = NONE;
        var m = before;
        loop {
          if (m == 0u || twin != NONE) { break; }
          let s = firstTrailingBit(m);
          m &= m - 1u;
          if (atomicLoad(&region_words[lb * PB + s]) == key) { twin = s; }
        }
        if (twin != NONE) {
          if (assign) { hv_store_value((b0 + lb) * 32u + twin, value); }
          atomicStore(&region_words[lb * PB + slot], EMPTY);
          atomicOr(&region_masks[lb], 1u << slot);
        } else {
          added += 1u;
          // The same bits a store by pass A sets (here only ever the away bit).
          let bits = hv_placement_bits(key, b0 + lb, (b0 + lb) * 32u + slot);
          if (bits != 0u) { atomicOr(&region_locks[lb], bits); }
        }
      }
      workgroupBarrier();
    }
    if (kin) {
      let w = kb * PB + kw;
      slots[kq] = vec4<u32>(atomicLoad(&region_words[w]), atomicLoad(&region_words[w + 1u]), atomicLoad(&region_words[w + 2u]), atomicLoad(&region_words[w + 3u]));
    }
    if (edge) {
      masks[b0 + lid] = atomicLoad(&region_masks[lid]);
      masks[params.lock_base + b0 + lid] = atomicLoad(&region_locks[lid]);
    }
    workgroupBarrier();
  }
  if (added != 0u) { atomicAdd(&wg_added, added); }
  workgroupBarrier();
  if (lid == 0u) {
    let a = atomicLoad(&wg_added);
    if (a != 0u) { atomicAdd(&counters[C_SIZE], a); }
  }
}`,
      { modules: [gridModule, commonModule], windows: slotWindows(w, { slots: 'vec4<u32>' }) },
    ),
});
