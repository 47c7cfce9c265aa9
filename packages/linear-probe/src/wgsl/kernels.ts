import { type Kernel, Op } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import type { KeyLayout } from './layout';

/** Invocations per workgroup of every linear-probe kernel. */
export const WORKGROUP_SIZE = 256;

/** Operation codes of mixed batches (`apply`). */
export const OP_INSERT = Op.insert;
export const OP_INSERT_OR_ASSIGN = Op.insertOrAssign;
export const OP_FIND = Op.find;
export const OP_ERASE = Op.erase;

const entry = /* wgsl */ `@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>)`;
const gridLoop = `for (var i = grid_thread(wid, nwg, lid, ${WORKGROUP_SIZE}u); i < params.n; i += grid_threads(nwg, ${WORKGROUP_SIZE}u))`;

/** Appends to `failed` (binding of the including kernel): failed[0] counts every failure exactly; indices are kept while the list has room. */
export const failureReport = /* wgsl */ `
fn report_failure(index: u32) {
  let at = atomicAdd(&failed[0], 1u);
  if (1u + at < arrayLength(&failed)) { atomicStore(&failed[1u + at], index); }
}`;

// Per-invocation tallies go to workgroup memory once, then one global atomic per workgroup:
// a global atomic per key on one counter word would serialise the whole batch.
const tallies = /* wgsl */ `
var<workgroup> wg_added: atomic<u32>;
var<workgroup> wg_untombed: atomic<u32>;
var<workgroup> wg_erased: atomic<u32>;
fn flush_tallies(lid: u32, added: u32, untombed: u32, erased: u32) {
  if (added != 0u) { atomicAdd(&wg_added, added); }
  if (untombed != 0u) { atomicAdd(&wg_untombed, untombed); }
  if (erased != 0u) { atomicAdd(&wg_erased, erased); }
  workgroupBarrier();
  if (lid == 0u) {
    let a = atomicLoad(&wg_added);
    let u = atomicLoad(&wg_untombed);
    let e = atomicLoad(&wg_erased);
    // counters[0] = live keys, counters[1] = tombstones (both wrap-safe u32 arithmetic)
    if (a != 0u || e != 0u) { atomicAdd(&counters[0], a - e); }
    if (u != 0u || e != 0u) { atomicAdd(&counters[1], e - u); }
  }
}
${failureReport}`;

const cache = new Map<string, Kernel>();

function kernel(name: string, layout: KeyLayout, flavour: string, build: () => string): Kernel {
  const key = `${layout.name}${flavour ? `,${flavour}` : ''}`;
  const cacheKey = `${name}|${key}`;
  let k = cache.get(cacheKey);
  if (!k) {
    k = { name: `linear-probe.${name}`, cacheKey: key, source: build(), workgroupSize: WORKGROUP_SIZE };
    cache.set(cacheKey, k);
  }
  return k;
}

export interface InsertFlavour {
  assign: boolean;
  /** Reuse tombstones (two-pass insert); only when the table has some. */
  reuseTombs: boolean;
  /** Claim by CAS on every probed slot (the paper's insert) instead of load, then CAS. Default true. */
  blindCas?: boolean;
}

/** Bindings: params, slots (atomic), keys, values, counters, failed. */
export function insertKernel(L: KeyLayout, f: InsertFlavour): Kernel {
  return kernel('insert', L, `assign=${f.assign},tombs=${f.reuseTombs},blind=${f.blindCas ?? true}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> keys: array<u32>;
@group(0) @binding(3) var<storage, read> values: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> failed: array<atomic<u32>>;
${tallies}
${entry} {
  var added = 0u;
  var untombed = 0u;
  ${gridLoop} {
    let key = ${L.readKey('i')};
    if (${L.isReserved('key')}) { report_failure(i | 0x80000000u); continue; }
    let r = lp_insert(key, values[i], ASSIGN);
    if (r == INSERTED) { added += 1u; }
    else if (r == INSERTED_IN_TOMB) { added += 1u; untombed += 1u; }
    else if (r == FAILED) { report_failure(i); }
  }
  flush_tallies(lid, added, untombed, 0u);
}`,
      {
        modules: [gridModule, L.protocol],
        constants: { ASSIGN: f.assign, REUSE_TOMBS: f.reuseTombs, PUBLISH_BUSY: false, BLIND_CAS: f.blindCas ?? true },
      },
    ),
  );
}

/** Bindings: params, slots_ro (the table, read-only), keys, out_values, out_found. */
export function findKernel(L: KeyLayout): Kernel {
  return kernel('find', L, '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots_ro: array<${L.findSlotType}>;
@group(0) @binding(2) var<storage, read> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> out_values: array<u32>;
@group(0) @binding(4) var<storage, read_write> out_found: array<u32>;
${entry} {
  ${gridLoop} {
    let key = ${L.readKey('i')};
    // A reserved key is never stored: it would match an empty or erased slot's marker.
    var r = vec2<u32>(0u, 0u);
    if (!${L.isReserved('key')}) { r = lp_find(key); }
    out_values[i] = r.x;
    out_found[i] = r.y;
  }
}`,
      { modules: [gridModule, L.find] },
    ),
  );
}

/** Bindings: params, slots (atomic), keys, counters, failed (unused but keeps tallies uniform). */
export function eraseKernel(L: KeyLayout): Kernel {
  return kernel('erase', L, '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> failed: array<atomic<u32>>;
${tallies}
${entry} {
  var erased = 0u;
  ${gridLoop} {
    let key = ${L.readKey('i')};
    if (${L.isReserved('key')}) { report_failure(i | 0x80000000u); continue; }
    if (lp_erase(key)) { erased += 1u; }
  }
  flush_tallies(lid, 0u, 0u, erased);
}`,
      { modules: [gridModule, L.protocol], constants: { REUSE_TOMBS: false, PUBLISH_BUSY: false, BLIND_CAS: true } },
    ),
  );
}

/**
 * Mixed batch: each invocation runs its own op (insert, insertOrAssign, find, erase) against the
 * table concurrently with the others. Inserts publish through BUSY and claim only EMPTY slots, so
 * no erase in the same batch can make two inserts of one key pick different slots.
 * Bindings: params, slots (atomic), ops, keys, values, out (value, status), counters, failed.
 */
export function applyKernel(L: KeyLayout): Kernel {
  return kernel('apply', L, '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> ops: array<u32>;
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read> values: array<u32>;
@group(0) @binding(5) var<storage, read_write> out: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> failed: array<atomic<u32>>;
${tallies}
${entry} {
  var added = 0u;
  var erased = 0u;
  ${gridLoop} {
    let key = ${L.readKey('i')};
    let op = ops[i];
    if (${L.isReserved('key')} || op > ${OP_ERASE}u) { report_failure(i | 0x80000000u); out[i] = vec2<u32>(0u, 0u); continue; }
    if (op == ${OP_FIND}u) {
      out[i] = lp_find_atomic(key);
    } else if (op == ${OP_ERASE}u) {
      let ok = lp_erase(key);
      if (ok) { erased += 1u; }
      out[i] = vec2<u32>(0u, select(0u, 1u, ok));
    } else {
      let r = lp_insert(key, values[i], op == ${OP_INSERT_OR_ASSIGN}u);
      if (r == INSERTED) { added += 1u; }
      if (r == FAILED) { report_failure(i); }
      out[i] = vec2<u32>(0u, select(0u, 1u, r == INSERTED));
    }
  }
  flush_tallies(lid, added, 0u, erased);
}`,
      { modules: [gridModule, L.protocol], constants: { REUSE_TOMBS: false, PUBLISH_BUSY: true, BLIND_CAS: false } },
    ),
  );
}

/**
 * Moves every live pair of an old table into this one (tombstones dropped). params.n is the old
 * capacity. Bindings: params, slots (new, atomic), old_slots, counters, failed (old slot indices).
 */
export function rehashKernel(L: KeyLayout): Kernel {
  return kernel('rehash', L, '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> old_slots: array<${L.slotType}>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> failed: array<atomic<u32>>;
${tallies}
${entry} {
  var added = 0u;
  ${gridLoop} {
    let s = old_slots[i];
    if (!slot_is_live(s)) { continue; }
    let r = lp_insert(slot_key(s), slot_value(s), false);
    if (r == INSERTED) { added += 1u; }
    else if (r == FAILED) { report_failure(i); }
  }
  flush_tallies(lid, added, 0u, 0u);
}`,
      { modules: [gridModule, L.protocol], constants: { REUSE_TOMBS: false, PUBLISH_BUSY: false, BLIND_CAS: true } },
    ),
  );
}

/**
 * Occupancy and probe lengths: out = [live, tombstones, displacement sum lo, hi, max displacement].
 * Bindings: params (n = capacity), slots_ro, out.
 */
export function statsKernel(L: KeyLayout): Kernel {
  return kernel('stats', L, '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots_ro: array<${L.slotType}>;
@group(0) @binding(2) var<storage, read_write> out: array<atomic<u32>>;
var<workgroup> wg_live: atomic<u32>;
var<workgroup> wg_tombs: atomic<u32>;
var<workgroup> wg_sum: atomic<u32>;
var<workgroup> wg_max: atomic<u32>;
${entry} {
  var live = 0u;
  var tombs = 0u;
  var sum = 0u;
  var longest = 0u;
  ${gridLoop} {
    let s = slots_ro[i];
    if (slot_is_tomb(s)) { tombs += 1u; }
    if (slot_is_live(s)) {
      live += 1u;
      let d = (i - lp_home(slot_key(s))) & params.mask;
      sum += d;
      longest = max(longest, d);
    }
  }
  atomicAdd(&wg_live, live);
  atomicAdd(&wg_tombs, tombs);
  atomicAdd(&wg_sum, sum);
  atomicMax(&wg_max, longest);
  workgroupBarrier();
  if (lid == 0u) {
    atomicAdd(&out[0], atomicLoad(&wg_live));
    atomicAdd(&out[1], atomicLoad(&wg_tombs));
    let s = atomicLoad(&wg_sum);
    let before = atomicAdd(&out[2], s);
    if (before + s < before) { atomicAdd(&out[3], 1u); }
    atomicMax(&out[4], atomicLoad(&wg_max));
  }
}`,
      { modules: [gridModule, L.common] },
    ),
  );
}

/**
 * Copies every live pair out, densely, in slot order within each workgroup's block. Blocks are
 * walked uniformly per workgroup so the barriers stay in uniform control flow.
 * Bindings: params (n = capacity), slots_ro, out_keys, out_values, cursor.
 */
export function retrieveKernel(L: KeyLayout): Kernel {
  return kernel('retrieve', L, '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots_ro: array<${L.slotType}>;
@group(0) @binding(2) var<storage, read_write> out_keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> out_values: array<u32>;
@group(0) @binding(4) var<storage, read_write> cursor: array<atomic<u32>>;
var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;
${entry} {
  let blocks = (params.n + ${WORKGROUP_SIZE}u - 1u) / ${WORKGROUP_SIZE}u;
  for (var b = grid_workgroup(wid, nwg); b < blocks; b += nwg.x * nwg.y) {
    let i = b * ${WORKGROUP_SIZE}u + lid;
    var s: ${L.slotType};
    var live = false;
    if (i < params.n) {
      s = slots_ro[i];
      live = slot_is_live(s);
    }
    var at = 0u;
    if (live) { at = atomicAdd(&wg_count, 1u); }
    workgroupBarrier();
    if (lid == 0u) {
      wg_base = atomicAdd(&cursor[0], atomicLoad(&wg_count));
      atomicStore(&wg_count, 0u);
    }
    workgroupBarrier();
    if (live) {
      ${L.writeKey('wg_base + at', 'slot_key(s)')}
      out_values[wg_base + at] = slot_value(s);
    }
    workgroupBarrier();
  }
}`,
      { modules: [gridModule, L.common] },
    ),
  );
}

/**
 * The spill pass of a bulk insert: global inserts of the pairs listed (by position) in `spill`
 * ([0] = count). The count lives on the device, so the grid is fixed and grid-strides over it.
 * Bindings: params, slots (atomic), pairs, spill, counters, failed (pair positions).
 */
export function spillInsertKernel(L: KeyLayout, assign: boolean): Kernel {
  return kernel('spill', L, `assign=${assign}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> spill: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> failed: array<atomic<u32>>;
${tallies}
${entry} {
  var added = 0u;
  let count = min(spill[0], arrayLength(&spill) - 1u);
  for (var i = grid_thread(wid, nwg, lid, ${WORKGROUP_SIZE}u); i < count; i += grid_threads(nwg, ${WORKGROUP_SIZE}u)) {
    let p = spill[1u + i];
    let kv = pairs[p];
    let r = lp_insert(kv.x, kv.y, ASSIGN);
    if (r == INSERTED) { added += 1u; }
    else if (r == FAILED) { report_failure(p); }
  }
  flush_tallies(lid, added, 0u, 0u);
}`,
      { modules: [gridModule, L.protocol], constants: { ASSIGN: assign, REUSE_TOMBS: false, PUBLISH_BUSY: false, BLIND_CAS: true } },
    ),
  );
}
