import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { failureReport, WORKGROUP_SIZE } from './kernels';
import { u32Layout } from './layout-u32';

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

const entry = /* wgsl */ `@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>)`;
const gridLoop = `for (var i = grid_thread(wid, nwg, lid, ${WORKGROUP_SIZE}u); i < params.n; i += grid_threads(nwg, ${WORKGROUP_SIZE}u))`;

const cache = new Map<string, Kernel>();
function kernel(name: string, flavour: string, build: () => string): Kernel {
  const key = `${name}|${flavour}`;
  let k = cache.get(key);
  if (!k) {
    k = { name: `linear-probe.bulk.${name}`, cacheKey: flavour, source: build(), workgroupSize: WORKGROUP_SIZE };
    cache.set(key, k);
  }
  return k;
}

/** Bindings: params (n = batch), keys, counts (atomic, one per region). */
export function bulkCountKernel(): Kernel {
  return kernel('count', '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<atomic<u32>>;
${entry} {
  ${gridLoop} {
    let key = keys[i];
    if (key < BUSY) { atomicAdd(&counts[lp_home(key) >> ${REGION_LOG2}u], 1u); }
  }
}`,
      { modules: [gridModule, u32Layout.common] },
    ),
  );
}

/**
 * Bindings: params (n = batch), keys, values, cursors (the scanned counts, atomic; each ends as
 * its region's end offset), pairs (out), failed (reserved keys are reported here).
 */
export function bulkScatterKernel(): Kernel {
  return kernel('scatter', '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> values: array<u32>;
@group(0) @binding(3) var<storage, read_write> cursors: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> failed: array<atomic<u32>>;
${failureReport}
${entry} {
  ${gridLoop} {
    let key = keys[i];
    if (key >= BUSY) { report_failure(i | 0x80000000u); continue; }
    let at = atomicAdd(&cursors[lp_home(key) >> ${REGION_LOG2}u], 1u);
    pairs[at] = vec2<u32>(key, values[i]);
  }
}`,
      { modules: [gridModule, u32Layout.common] },
    ),
  );
}

/**
 * One workgroup per region (grid-strided, uniform per workgroup so the barriers are legal).
 * Bindings: params (n = regions, max_probes), slots (the table, plain: nothing else touches it in
 * this dispatch), pairs, ends (region end offsets), counters, failed (here: the spill list of
 * pair positions).
 */
export function bulkBuildKernel(assign: boolean): Kernel {
  return kernel('build', `assign=${assign}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(3) var<storage, read> ends: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> failed: array<atomic<u32>>;
var<workgroup> region_keys: array<atomic<u32>, ${REGION_SLOTS}>;
var<workgroup> region_values: array<atomic<u32>, ${REGION_SLOTS}>;
var<workgroup> wg_added: atomic<u32>;
${failureReport}
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
      { modules: [gridModule, u32Layout.common], constants: { ASSIGN: assign } },
    ),
  );
}
