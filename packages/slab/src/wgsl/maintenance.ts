import { defineKernel, storage, uniform } from '@gpuhash/core';
import {
  atomicHelpers,
  chunkLoop,
  composeWgsl,
  cooperativeEntryParams,
  entryPoint,
  gridModule,
  gridStrideLoop,
  wgslModule,
} from '@gpuhash/kernels';
import type { SlabMode } from '../geometry';
import { layoutModule } from './layout';
import { slabParams, WORKGROUP_SIZE } from './params';
import { slabAllocModule } from './slab-alloc';
import { talliesModule } from './tallies';

/**
 * Passes over the whole table (retrieve, stats, flush) and the allocator's own passes (allocate n
 * slabs, free a list), outside the WCWS kernels.
 */

const atomics = storage('read_write', 'atomic<u32>');
const gridLoop = (index: string, count: string) => gridStrideLoop(index, count, WORKGROUP_SIZE);

/** Entry word of entry e of slab s (map and multimap: the key word of pair e; set: word e). */
const entryModule = wgslModule(
  'slab.entries',
  /* wgsl */ `
fn sl_entries() -> u32 { return select(15u, 31u, SET_MODE); }
fn sl_entry_word(s: u32, e: u32) -> u32 { return s * 32u + select(2u * e, e, SET_MODE); }
fn sl_live(k: u32) -> bool { return k < BUSY_KEY; }`,
  { requires: [layoutModule], needs: ['SET_MODE'] },
);

const modeConstants = (mode: SlabMode) => ({ SET_MODE: mode === 'set', UNIQUE: mode !== 'multimap' });

/** Every live entry, densely, to out_keys/out_values (set mode: values 0); count to cursor[0]. params.n: the slab count. */
export const retrieveKernel = defineKernel({
  name: 'slab.retrieve',
  workgroupSize: WORKGROUP_SIZE,
  variant: { mode: 'map' as SlabMode },
  params: slabParams,
  bindings: {
    params: uniform(),
    slabs_ro: storage('read', 'u32'),
    out_keys: storage('read_write', 'u32'),
    out_values: storage('read_write', 'u32'),
    cursor: atomics,
  },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;
${entryPoint(WORKGROUP_SIZE)} {
  // One invocation per entry slot of the slab array (unused pool slabs are all EMPTY).
  let per_slab = sl_entries();
  let total = params.n * per_slab;
  ${chunkLoop('total', WORKGROUP_SIZE)} {
    let t = base + lid;
    var k = EMPTY_KEY;
    var w = 0u;
    if (t < total) {
      w = sl_entry_word(t / per_slab, t % per_slab);
      k = slabs_ro[w];
    }
    let live = sl_live(k);
    if (lid == 0u) { atomicStore(&wg_count, 0u); }
    workgroupBarrier();
    var at = 0u;
    if (live) { at = atomicAdd(&wg_count, 1u); }
    workgroupBarrier();
    if (lid == 0u) { wg_base = atomicAdd(&cursor[0], atomicLoad(&wg_count)); }
    let first = workgroupUniformLoad(&wg_base);
    if (live) {
      out_keys[first + at] = k;
      out_values[first + at] = select(slabs_ro[w + 1u], 0u, SET_MODE);
    }
  }
}`,
      { modules: [gridModule, entryModule], constants: modeConstants(v.mode) },
    ),
});

/**
 * Per bucket, one invocation walks the chain: out[0] live entries, out[1] tombstones, out[2]
 * slabs in chains (base slabs included), out[3] the longest chain (slabs), out[4] buckets whose
 * chain has more than one slab.
 */
export const statsKernel = defineKernel({
  name: 'slab.stats',
  workgroupSize: WORKGROUP_SIZE,
  variant: { mode: 'map' as SlabMode },
  params: slabParams,
  bindings: { params: uniform(), slabs_ro: storage('read', 'u32'), out: atomics },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> wg_sum: array<atomic<u32>, 5>;
${entryPoint(WORKGROUP_SIZE)} {
  var live = 0u;
  var tombs = 0u;
  var slabs = 0u;
  var longest = 0u;
  var long_chains = 0u;
  ${gridLoop('b', 'params.buckets')} {
    var s = b;
    var chain = 0u;
    for (var hops = 0u; hops < params.max_hops; hops++) {
      chain += 1u;
      for (var e = 0u; e < sl_entries(); e++) {
        let k = slabs_ro[sl_entry_word(s, e)];
        if (sl_live(k)) { live += 1u; }
        if (k == TOMBSTONE_KEY) { tombs += 1u; }
      }
      let next = slabs_ro[s * 32u + 31u];
      if (next == EMPTY_POINTER) { break; }
      s = next;
    }
    slabs += chain;
    longest = max(longest, chain);
    if (chain > 1u) { long_chains += 1u; }
  }
  atomicAdd(&wg_sum[0], live);
  atomicAdd(&wg_sum[1], tombs);
  atomicAdd(&wg_sum[2], slabs);
  atomicMax(&wg_sum[3], longest);
  atomicAdd(&wg_sum[4], long_chains);
  workgroupBarrier();
  if (lid < 5u) {
    let x = atomicLoad(&wg_sum[lid]);
    if (lid == 3u) { atomicMax(&out[3], x); } else if (x != 0u) { atomicAdd(&out[lid], x); }
  }
}`,
      { modules: [gridModule, entryModule], constants: modeConstants(v.mode) },
    ),
});

/**
 * FLUSH (the paper's §IV-A4, left unimplemented there): per bucket, one invocation compacts the
 * chain's live entries towards its head, in chain order, resets the slabs emptied at the end to
 * all EMPTY and returns them to SlabAlloc. Tombstones are dropped. Runs in its own dispatch, so no
 * other operation sees a chain mid-compaction; the next dispatch sees the reset slabs.
 */
export const flushKernel = defineKernel({
  name: 'slab.flush',
  workgroupSize: WORKGROUP_SIZE,
  variant: { mode: 'map' as SlabMode },
  params: slabParams,
  bindings: { params: uniform(), slabs: atomics, bitmap: atomics, counters: atomics },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
fn word_at(i: u32) -> u32 { return atomicLoad(&slabs[i]); }
fn set_word(i: u32, x: u32) { atomicStore(&slabs[i], x); }
fn next_of(s: u32) -> u32 { return word_at(s * 32u + 31u); }

${entryPoint(WORKGROUP_SIZE)} {
  let m = sl_entries();
  ${gridLoop('b', 'params.buckets')} {
    // Read position (rs, e) and write position (ws, wc); the write position never passes the
    // read position, and next pointers are not changed until the end, so next_of(ws) is the
    // chain's own link.
    var ws = b;
    var wc = 0u;
    var rs = b;
    var tombs = 0u;
    for (var hops = 0u; hops < params.max_hops; hops++) {
      for (var e = 0u; e < m; e++) {
        let rw = sl_entry_word(rs, e);
        let k = word_at(rw);
        if (k == TOMBSTONE_KEY) { tombs += 1u; }
        if (!sl_live(k)) { continue; }
        if (wc == m) { ws = next_of(ws); wc = 0u; }
        let ww = sl_entry_word(ws, wc);
        if (ww != rw) {
          set_word(ww, k);
          if (!SET_MODE) { set_word(ww + 1u, word_at(rw + 1u)); }
        }
        wc += 1u;
      }
      let next = next_of(rs);
      if (next == EMPTY_POINTER) { break; }
      rs = next;
    }
    count(T_UNTOMBED, tombs);
    // Empty the rest of the last kept slab, cut the chain there, and free what followed.
    for (var e = wc; e < m; e++) {
      let w = sl_entry_word(ws, e);
      set_word(w, EMPTY_KEY);
      if (!SET_MODE) { set_word(w + 1u, EMPTY_KEY); }
    }
    var rest = next_of(ws);
    set_word(ws * 32u + 31u, EMPTY_POINTER);
    for (var hops = 0u; hops < params.max_hops; hops++) {
      if (rest == EMPTY_POINTER) { break; }
      let after = next_of(rest);
      for (var w = 0u; w < 32u; w++) { set_word(rest * 32u + w, EMPTY_KEY); }
      sa_free(rest);
      rest = after;
    }
  }
  flush_tallies(lid);
}`,
      {
        modules: [gridModule, entryModule, slabAllocModule(false, talliesModule), talliesModule],
        constants: modeConstants(v.mode),
      },
    ),
});

/** The allocator alone (its benchmark and tests): entry i gets a slab index in out[i] (NONE when the pool is exhausted). */
export const allocateKernel = defineKernel({
  name: 'slab.allocate',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, tile: 16 },
  params: slabParams,
  bindings: { params: uniform(), bitmap: atomics, out: storage('read_write', 'u32'), counters: atomics },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups: v.subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, ${v.tile}u);
  sa_init(grid_workgroup(wid, nwg) * ${WORKGROUP_SIZE}u + lid - cg_lane());
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let t = base + lid;
    var queue = cg_ballot32(t < params.n);
    loop {
      if (queue == 0u) { break; }
      let src = firstTrailingBit(queue);
      queue &= queue - 1u;
      // The paper's benchmark: one slab per thread, allocated by its warp.
      let s = sa_allocate();
      if (cg_lane() == src) {
        out[t] = s;
        if (s == NONE) { count(T_EXHAUSTED, 1u); }
      }
    }
  }
  flush_tallies(lid);
}`,
      { modules: [gridModule, layoutModule, slabAllocModule(v.subgroups, talliesModule), talliesModule], constants: { SET_MODE: false } },
    ),
});

/** Returns the slabs listed in `list` (n of them; NONE entries skipped) to the allocator. */
export const freeKernel = defineKernel({
  name: 'slab.free',
  workgroupSize: WORKGROUP_SIZE,
  params: slabParams,
  bindings: { params: uniform(), bitmap: atomics, list: storage('read', 'u32'), counters: atomics },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WORKGROUP_SIZE)} {
  ${gridLoop('i', 'params.n')} {
    let s = list[i];
    if (s != NONE) { sa_free(s); }
  }
  flush_tallies(lid);
}`,
      {
        modules: [gridModule, layoutModule, atomicHelpers('bitmap', 'bm'), slabAllocModule(false, talliesModule), talliesModule],
        constants: { SET_MODE: false },
      },
    ),
});
