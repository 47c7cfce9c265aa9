import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, failureListModule, gridModule, gridStrideLoop, type StorageWindows } from '@gpuhash/kernels';
import { u32Layout } from './layout-u32';
import { linearProbeParams, WORKGROUP_SIZE } from './params';
import { ONE_WINDOW, slotsBinding, slotWindows } from './windows';

/**
 * Partitioned bulk insert (u32 keys). Inserting with global atomics costs two random L2 atomics
 * per key (claim the key word, then store the value), and no WGSL atomic covers both words. For a
 * large batch it is cheaper to move the work into workgroup memory:
 *   1. count: keys per region (a region is REGION_SLOTS consecutive slots, by home slot);
 *   2. scan the counts into region offsets (device-wide exclusive scan);
 *   3. scatter: pairs grouped by region;
 *   4. build: one workgroup per region loads the region's slots into workgroup memory, inserts its
 *      keys there with workgroup atomics (same linear probing, same CAS claim), and writes the
 *      region back with coalesced stores;
 *   5. spill: keys whose probe ran off the end of their region go through the ordinary global
 *      insert, which continues into the next region exactly as a probe would.
 * The layout it produces obeys the linear-probing invariant (no empty slot between a key's home and
 * its slot), so finds, erases and later inserts need not know which path placed a key.
 */
export const REGION_LOG2 = 11;
export const REGION_SLOTS = 1 << REGION_LOG2;

const entry = entryPoint(WORKGROUP_SIZE);
const gridLoop = gridStrideLoop('i', 'params.n', WORKGROUP_SIZE);

const words = storage('read', 'u32');

/**
 * How a bulk pass binds its grouped pairs: one buffer, or `pairWindows` buffers of
 * 2^pairWindowLog2 pairs, so that a part of the batch may hold more pairs than one binding
 * (2^27 on the GPU hosts): fewer parts, and fewer loads and stores of every region.
 */
export interface PairWindows {
  pairWindows: number;
  pairWindowLog2: number;
}

export const ONE_PAIR_WINDOW: PairWindows = { pairWindows: 1, pairWindowLog2: 0 };

/** The `pairs` binding of a bulk pass. */
export const pairsBinding = (access: 'read' | 'read_write', v: PairWindows) => storage(access, 'vec2<u32>', v.pairWindows);

/** composeWgsl's `windows` entry for the pairs, when they span several buffers. */
export function pairsWindows(v: PairWindows): StorageWindows[] {
  return v.pairWindows > 1 ? [{ name: 'pairs', element: 'vec2<u32>', count: v.pairWindows, elementsLog2: v.pairWindowLog2 }] : [];
}
const atomicsRW = storage('read_write', 'atomic<u32>');

/** Keys per region into `counts` (one per region; params.n = batch). */
export const bulkCountKernel = defineKernel({
  name: 'linear-probe.bulk.count',
  workgroupSize: WORKGROUP_SIZE,
  params: linearProbeParams,
  bindings: { params: uniform(), keys: words, counts: atomicsRW },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entry} {
  ${gridLoop} {
    let key = keys[i];
    if (key < BUSY) { atomicAdd(&counts[lp_home(key) >> ${REGION_LOG2}u], 1u); }
  }
}`,
      { modules: [gridModule, u32Layout.common] },
    ),
});

/**
 * Pairs grouped by region: cursors are the scanned counts (each ends as its region's end offset);
 * reserved keys go to `failed` (params.n = batch).
 */
export const bulkScatterKernel = defineKernel({
  name: 'linear-probe.bulk.scatter',
  workgroupSize: WORKGROUP_SIZE,
  variant: ONE_PAIR_WINDOW,
  params: linearProbeParams,
  bindings: (v) => ({
    params: uniform(),
    keys: words,
    values: words,
    cursors: atomicsRW,
    pairs: pairsBinding('read_write', v),
    failed: atomicsRW,
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entry} {
  ${gridLoop} {
    let key = keys[i];
    if (key >= BUSY) { report_failure(i | 0x80000000u); continue; }
    let at = atomicAdd(&cursors[lp_home(key) >> ${REGION_LOG2}u], 1u);
    pairs[at] = vec2<u32>(key, values[i]);
  }
}`,
      { modules: [gridModule, u32Layout.common, failureListModule], windows: pairsWindows(v) },
    ),
});

/**
 * One workgroup per region (grid-strided, uniform per workgroup so the barriers are legal).
 * params.n = regions; slots is the table, plain (nothing else touches it in this dispatch); ends
 * are the region end offsets; `failed` is the spill list of pair positions.
 */
export const bulkBuildKernel = defineKernel({
  name: 'linear-probe.bulk.build',
  workgroupSize: WORKGROUP_SIZE,
  variant: { assign: false, ...ONE_WINDOW, ...ONE_PAIR_WINDOW },
  params: linearProbeParams,
  bindings: (v) => ({
    params: uniform(),
    slots: slotsBinding('read_write', 'vec2<u32>', v),
    pairs: pairsBinding('read', v),
    ends: words,
    counters: atomicsRW,
    failed: atomicsRW,
  }),
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> region_keys: array<atomic<u32>, ${REGION_SLOTS}>;
var<workgroup> region_values: array<atomic<u32>, ${REGION_SLOTS}>;
var<workgroup> wg_added: atomic<u32>;
${entry} {
  var added = 0u;
  let reach = min(params.max_probes, ${REGION_SLOTS}u);
  for (var r = grid_workgroup(wid, nwg); r < params.n; r += nwg.x * nwg.y) {
    var begin = 0u;
    if (r > 0u) { begin = ends[r - 1u]; }
    let end = ends[r];
    if (begin == end) { continue; }
    let base = r * ${REGION_SLOTS}u;
    for (var s = lid; s < ${REGION_SLOTS}u; s += ${WORKGROUP_SIZE}u) {
      let v = slots[base + s];
      atomicStore(&region_keys[s], v.x);
      atomicStore(&region_values[s], v.y);
    }
    workgroupBarrier();
    for (var p = begin + lid; p < end; p += ${WORKGROUP_SIZE}u) {
      let kv = pairs[p];
      let home = lp_home(kv.x) & ${REGION_SLOTS - 1}u;
      var s = home;
      var placed = false;
      loop {
        if (s >= ${REGION_SLOTS}u || s - home >= reach) { break; }
        let c = atomicCompareExchangeWeak(&region_keys[s], EMPTY, kv.x);
        if (c.exchanged) {
          atomicStore(&region_values[s], kv.y);
          added += 1u;
          placed = true;
          break;
        }
        if (c.old_value == kv.x) {
          if (ASSIGN) { atomicStore(&region_values[s], kv.y); }
          placed = true;
          break;
        }
        if (c.old_value != EMPTY) { s += 1u; }
      }
      // The probe left the region (or the slots it may search here are full): the global insert
      // continues it from the key's home.
      if (!placed) { report_failure(p); }
    }
    workgroupBarrier();
    for (var s = lid; s < ${REGION_SLOTS}u; s += ${WORKGROUP_SIZE}u) {
      slots[base + s] = vec2<u32>(atomicLoad(&region_keys[s]), atomicLoad(&region_values[s]));
    }
    workgroupBarrier();
  }
  if (added != 0u) { atomicAdd(&wg_added, added); }
  workgroupBarrier();
  if (lid == 0u) {
    let a = atomicLoad(&wg_added);
    if (a != 0u) { atomicAdd(&counters[0], a); }
  }
}`,
      {
        modules: [gridModule, u32Layout.common, failureListModule],
        constants: { ASSIGN: v.assign },
        windows: [...slotWindows({ ...v, layout: 'u32' }, { slots: 'vec2<u32>' }), ...pairsWindows(v)],
      },
    ),
});
