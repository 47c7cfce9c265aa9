import { batchGridLoop, chunkItem, defineKernel, Op, orderBinding, storage, uniform } from '@gpuhash/core';
import {
  chunkLoop,
  composeWgsl,
  cooperativeEntryParams,
  entryPoint,
  failureListModule,
  gridModule,
  gridStrideLoop,
} from '@gpuhash/kernels';
import { ONE_PAIR_WINDOW, pairsBinding, pairsWindows } from './bulk';
import { keyLayout } from './key-layouts';
import type { KeyLayout } from './layout';
import { findCoopU32Module, insertCoopU32Module } from './layout-u32';
import { linearProbeParams, WORKGROUP_SIZE } from './params';
import { talliesModule } from './tallies';
import { ONE_WINDOW, type SlotWindows, slotsBinding, slotWindows } from './windows';

export { WORKGROUP_SIZE };

/** Operation codes of mixed batches (`apply`). */
export const OP_INSERT = Op.insert;
export const OP_INSERT_OR_ASSIGN = Op.insertOrAssign;
export const OP_FIND = Op.find;
export const OP_ERASE = Op.erase;

/** Variants name their key layout; the kernel looks the layout up. */
type LayoutVariant = { layout: KeyLayout['name'] };
const ATOMIC_SLOTS = { slots: 'atomic<u32>' } as const;
const u32Keys: LayoutVariant & SlotWindows = { layout: 'u32', ...ONE_WINDOW };

/**
 * Slots a blind-CAS insert reads at once past an occupied slot, and slot pairs a lookup reads at
 * once past its home pair (layout-u32.ts; u64 keys probe one slot at a time). One at a time, a
 * probe of d slots is d round trips: at load 0.9 a build averages 5.5 slots and a miss 50.
 */
export const PROBE_AHEAD = 8;
export const PAIRS_AHEAD = 4;
/** Steps of PAIRS_AHEAD pairs a lookup walks alone before its subgroup walks the rest with it (layout-u32.ts). */
export const PRIVATE_STEPS = 4;
/** Read-aheads an insert walks alone before its subgroup walks the rest with it (layout-u32.ts). */
export const PRIVATE_INSERT_STEPS = 1;
/** Slots that one read-ahead covers when the subgroup walks the rest (4 built to 0.9 5% faster than 8). */
export const COOP_PROBE_AHEAD = 4;
/** Lanes that walk one long probe together, one pair each (a step reads 2 x COOP_TILE slots). */
export const COOP_TILE = 32;
/**
 * Lookups take the cooperative kernel in tables loaded past this: below it few probes are long,
 * and the plain kernel was faster (misses at load 0.75 of 2^27 slots: 14.0 G/s against 12.4).
 */
export const COOP_FROM_LOAD = 0.8;

const entry = entryPoint(WORKGROUP_SIZE);
const gridLoop = gridStrideLoop('i', 'params.n', WORKGROUP_SIZE);

/** The table as the protocol modules write it, and the words and counters kernels share. */
const slotsRW = (v: SlotWindows) => slotsBinding('read_write', 'atomic<u32>', v);
const words = storage('read', 'u32');
const atomicsRW = storage('read_write', 'atomic<u32>');

/**
 * Inserts: `assign` overwrites existing values; `reuseTombs` (two-pass insert) only when the
 * table has tombstones; `blindCas` claims by CAS on every probed slot (the paper's insert) instead
 * of load, then CAS; `ahead` slots read at once past an occupied slot. With `coop` (u32 keys,
 * blind CAS, no tombstone reuse), inserts still going after `privateSteps` read-aheads are walked
 * by groups of `coopTile` lanes (layout-u32.ts).
 */
export const insertKernel = defineKernel({
  name: 'linear-probe.insert',
  workgroupSize: WORKGROUP_SIZE,
  variant: {
    ...u32Keys,
    assign: false,
    reuseTombs: false,
    blindCas: true,
    ahead: PROBE_AHEAD,
    coop: false,
    subgroups: false,
    privateSteps: PRIVATE_INSERT_STEPS,
    coopTile: COOP_TILE,
  },
  params: linearProbeParams,
  bindings: (v) => ({ params: uniform(), slots: slotsRW(v), keys: words, values: words, counters: atomicsRW, failed: atomicsRW }),
  source: (decls, v) => {
    const L = keyLayout(v.layout);
    const windows = slotWindows(v, ATOMIC_SLOTS);
    const constants = {
      ASSIGN: v.assign,
      REUSE_TOMBS: v.reuseTombs,
      PUBLISH_BUSY: false,
      BLIND_CAS: v.blindCas,
      PROBE_AHEAD: v.ahead >>> 0,
      PRIVATE_STEPS: v.privateSteps >>> 0,
    };
    if (v.coop && v.layout === 'u32' && v.blindCas && !v.reuseTombs && v.ahead > 0)
      return composeWgsl(
        /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups: v.subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, ${v.coopTile >>> 0}u);
  var added = 0u;
  // Whole-workgroup chunks keep every lane of a group in the cooperative loop together.
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    var live = i < params.n;
    var key = EMPTY;
    var value = 0u;
    if (live) {
      key = keys[i];
      if (${L.isReserved('key')}) {
        report_failure(i | 0x80000000u);
        live = false;
      } else {
        value = values[i];
      }
    }
    let r = lp_insert_coop(key, value, ASSIGN, live);
    if (live) {
      if (r == INSERTED) { added += 1u; }
      else if (r == FAILED) { report_failure(i); }
    }
  }
  flush_tallies(lid, added, 0u, 0u);
}`,
        { modules: [gridModule, insertCoopU32Module(v.subgroups), talliesModule, failureListModule], constants, windows },
      );
    return composeWgsl(
      /* wgsl */ `
${decls}
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
      { modules: [gridModule, L.protocol, talliesModule, failureListModule], constants, windows },
    );
  },
});

/**
 * Lookups through the read-only view of the table (`slots_ro`: the slots buffer, bound
 * read-only), `pairsAhead` pairs a step past the home pair. With `coop` (u32 keys), the probes
 * still going after `privateSteps` steps are walked by groups of `coopTile` lanes of a subgroup
 * (layout-u32.ts). With `ordered`, the batch is walked in the order `order` lists its indices
 * (@gpuhash/core's window order) and each answer lands at its list position, for the gather to move.
 */
export const findKernel = defineKernel({
  name: 'linear-probe.find',
  workgroupSize: WORKGROUP_SIZE,
  variant: {
    ...u32Keys,
    pairsAhead: PAIRS_AHEAD,
    coop: false,
    subgroups: false,
    privateSteps: PRIVATE_STEPS,
    coopTile: COOP_TILE,
    ordered: false,
  },
  params: linearProbeParams,
  bindings: (v) => ({
    params: uniform(),
    slots_ro: slotsBinding('read', keyLayout(v.layout).findSlotType, v),
    keys: words,
    out_values: storage('read_write', 'u32'),
    out_found: storage('read_write', 'u32'),
    ...orderBinding(v.ordered),
  }),
  source: (decls, v) => {
    const L = keyLayout(v.layout);
    const constants = { PAIRS_AHEAD: v.pairsAhead >>> 0, PRIVATE_STEPS: v.privateSteps >>> 0 };
    const windows = slotWindows(v, { slots_ro: L.findSlotType });
    if (v.coop && v.layout === 'u32')
      return composeWgsl(
        /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups: v.subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, ${v.coopTile >>> 0}u);
  // Whole-workgroup chunks keep every lane of a group in the cooperative loop together.
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    ${chunkItem(v.ordered)}
    let live = base + lid < params.n;
    var key = EMPTY;
    if (live) { key = keys[i]; }
    // A reserved key is never stored: it would match an empty or erased slot's marker.
    let r = lp_find_coop(key, live && !${L.isReserved('key')});
    if (live) {
      out_values[answer_at] = r.x;
      out_found[answer_at] = r.y;
    }
  }
}`,
        { modules: [gridModule, findCoopU32Module(v.subgroups)], constants, windows },
      );
    return composeWgsl(
      /* wgsl */ `
${decls}
${entry} {
  ${batchGridLoop(v.ordered, WORKGROUP_SIZE)}
    let key = ${L.readKey('i')};
    // A reserved key is never stored: it would match an empty or erased slot's marker.
    var r = vec2<u32>(0u, 0u);
    if (!${L.isReserved('key')}) { r = lp_find(key); }
    out_values[answer_at] = r.x;
    out_found[answer_at] = r.y;
  }
}`,
      { modules: [gridModule, L.find], constants, windows },
    );
  },
});

/** Erases; `failed` takes the reserved keys. */
export const eraseKernel = defineKernel({
  name: 'linear-probe.erase',
  workgroupSize: WORKGROUP_SIZE,
  variant: u32Keys,
  params: linearProbeParams,
  bindings: (v) => ({ params: uniform(), slots: slotsRW(v), keys: words, counters: atomicsRW, failed: atomicsRW }),
  source: (decls, v) => {
    const L = keyLayout(v.layout);
    return composeWgsl(
      /* wgsl */ `
${decls}
${entry} {
  var erased = 0u;
  ${gridLoop} {
    let key = ${L.readKey('i')};
    if (${L.isReserved('key')}) { report_failure(i | 0x80000000u); continue; }
    if (lp_erase(key)) { erased += 1u; }
  }
  flush_tallies(lid, 0u, 0u, erased);
}`,
      {
        modules: [gridModule, L.protocol, talliesModule, failureListModule],
        constants: { REUSE_TOMBS: false, PUBLISH_BUSY: false, BLIND_CAS: true, PROBE_AHEAD },
        windows: slotWindows(v, ATOMIC_SLOTS),
      },
    );
  },
});

/**
 * Mixed batch: each invocation runs its own op (insert, insertOrAssign, find, erase) against the
 * table concurrently with the others. Inserts publish through BUSY and claim only EMPTY slots, so
 * no erase in the same batch can make two inserts of one key pick different slots.
 * `out` gets (value, status) per op.
 */
export const applyKernel = defineKernel({
  name: 'linear-probe.apply',
  workgroupSize: WORKGROUP_SIZE,
  variant: u32Keys,
  params: linearProbeParams,
  bindings: (v) => ({
    params: uniform(),
    slots: slotsRW(v),
    ops: words,
    keys: words,
    values: words,
    out: storage('read_write', 'vec2<u32>'),
    counters: atomicsRW,
    failed: atomicsRW,
  }),
  source: (decls, v) => {
    const L = keyLayout(v.layout);
    return composeWgsl(
      /* wgsl */ `
${decls}
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
      {
        modules: [gridModule, L.protocol, talliesModule, failureListModule],
        constants: { REUSE_TOMBS: false, PUBLISH_BUSY: true, BLIND_CAS: false, PROBE_AHEAD },
        windows: slotWindows(v, ATOMIC_SLOTS),
      },
    );
  },
});

/**
 * Moves every live pair of an old table into this one (tombstones dropped). params.n is the old
 * capacity, or the slots of one window of it: a windowed old table is moved one window per
 * dispatch (`old_slots` is always one binding). `failed` counts the pairs that found no slot.
 */
export const rehashKernel = defineKernel({
  name: 'linear-probe.rehash',
  workgroupSize: WORKGROUP_SIZE,
  variant: u32Keys,
  params: linearProbeParams,
  bindings: (v) => ({
    params: uniform(),
    slots: slotsRW(v),
    old_slots: storage('read', keyLayout(v.layout).slotType),
    counters: atomicsRW,
    failed: atomicsRW,
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
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
      {
        modules: [gridModule, keyLayout(v.layout).protocol, talliesModule, failureListModule],
        constants: { REUSE_TOMBS: false, PUBLISH_BUSY: false, BLIND_CAS: true, PROBE_AHEAD },
        windows: slotWindows(v, ATOMIC_SLOTS),
      },
    ),
});

/** Occupancy and probe lengths: out = [live, tombstones, displacement sum lo, hi, max displacement]; params.n = capacity. */
export const statsKernel = defineKernel({
  name: 'linear-probe.stats',
  workgroupSize: WORKGROUP_SIZE,
  variant: u32Keys,
  params: linearProbeParams,
  bindings: (v) => ({ params: uniform(), slots_ro: slotsBinding('read', keyLayout(v.layout).slotType, v), out: atomicsRW }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
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
      { modules: [gridModule, keyLayout(v.layout).common], windows: slotWindows(v, { slots_ro: keyLayout(v.layout).slotType }) },
    ),
});

/**
 * Copies every live pair out, densely, in slot order within each workgroup's block. Blocks are
 * walked uniformly per workgroup so the barriers stay in uniform control flow. params.n = capacity.
 */
export const retrieveKernel = defineKernel({
  name: 'linear-probe.retrieve',
  workgroupSize: WORKGROUP_SIZE,
  variant: u32Keys,
  params: linearProbeParams,
  bindings: (v) => ({
    params: uniform(),
    slots_ro: slotsBinding('read', keyLayout(v.layout).slotType, v),
    out_keys: storage('read_write', 'u32'),
    out_values: storage('read_write', 'u32'),
    cursor: atomicsRW,
  }),
  source: (decls, v) => {
    const L = keyLayout(v.layout);
    return composeWgsl(
      /* wgsl */ `
${decls}
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
      { modules: [gridModule, L.common], windows: slotWindows(v, { slots_ro: L.slotType }) },
    );
  },
});

/**
 * The spill pass of a bulk insert: global inserts of the pairs listed (by position) in `spill`
 * ([0] = count). The count lives on the device, so the grid is fixed and grid-strides over it.
 * `failed` gets pair positions.
 */
export const spillInsertKernel = defineKernel({
  name: 'linear-probe.spill',
  workgroupSize: WORKGROUP_SIZE,
  variant: { ...u32Keys, ...ONE_PAIR_WINDOW, assign: false, coop: false, subgroups: false, coopTile: COOP_TILE },
  params: linearProbeParams,
  bindings: (v) => ({
    params: uniform(),
    slots: slotsRW(v),
    pairs: pairsBinding('read', v),
    spill: words,
    counters: atomicsRW,
    failed: atomicsRW,
  }),
  source: (decls, v) => {
    const windows = [...slotWindows(v, ATOMIC_SLOTS), ...pairsWindows(v)];
    const constants = {
      ASSIGN: v.assign,
      REUSE_TOMBS: false,
      PUBLISH_BUSY: false,
      BLIND_CAS: true,
      PROBE_AHEAD: v.coop ? COOP_PROBE_AHEAD : PROBE_AHEAD,
      PRIVATE_STEPS: PRIVATE_INSERT_STEPS,
    };
    if (v.coop && v.layout === 'u32')
      // The spill's long probes walked by the group (layout-u32.ts), as the atomic path's inserts.
      return composeWgsl(
        /* wgsl */ `
${decls}
var<workgroup> wg_count: u32;
${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups: v.subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, ${v.coopTile >>> 0}u);
  if (lid == 0u) { wg_count = min(spill[0], arrayLength(&spill) - 1u); }
  let count = workgroupUniformLoad(&wg_count);
  var added = 0u;
  ${chunkLoop('count', WORKGROUP_SIZE)} {
    let j = base + lid;
    let live = j < count;
    var p = 0u;
    var kv = vec2<u32>(EMPTY, 0u);
    if (live) {
      p = spill[1u + j];
      kv = pairs[p];
    }
    let r = lp_insert_coop(kv.x, kv.y, ASSIGN, live);
    if (live) {
      if (r == INSERTED) { added += 1u; }
      else if (r == FAILED) { report_failure(p); }
    }
  }
  flush_tallies(lid, added, 0u, 0u);
}`,
        { modules: [gridModule, insertCoopU32Module(v.subgroups), talliesModule, failureListModule], constants, windows },
      );
    return composeWgsl(
      /* wgsl */ `
${decls}
${entry} {
  var added = 0u;
  let count = min(spill[0], arrayLength(&spill) - 1u);
  ${gridStrideLoop('i', 'count', WORKGROUP_SIZE)} {
    let p = spill[1u + i];
    let kv = pairs[p];
    let r = lp_insert(kv.x, kv.y, ASSIGN);
    if (r == INSERTED) { added += 1u; }
    else if (r == FAILED) { report_failure(p); }
  }
  flush_tallies(lid, added, 0u, 0u);
}`,
      { modules: [gridModule, keyLayout(v.layout).protocol, talliesModule, failureListModule], constants, windows },
    );
  },
});
