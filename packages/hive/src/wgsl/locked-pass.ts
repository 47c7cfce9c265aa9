import { defineKernel } from '@gpuhash/core';
import { composeWgsl, cooperativeEntryParams, entryPoint, gridModule } from '@gpuhash/kernels';
import { WORKGROUP_SIZE } from './common';
import { cuckooModule } from './cuckoo';
import { listsModule } from './lists';
import { opPassBindings, opPassWindows } from './op-pass';
import { hiveParams } from './params';
import { ONE_WINDOW } from './windows';

/**
 * Lanes per op in the locked pass: a cooperative group of 4 lanes scans a bucket in 8 steps, so
 * a subgroup of 32 runs 8 ops at once. The pass is a chain of dependent round trips per op, so
 * ops in flight matter more than the steps: on an H200 (2026-11-22, 2^27 slots at load 0.95, one
 * perf-hive run at 5d92126, its second round) a 2^22-op mixed batch's locked pass took 4.45 ms
 * with 32 lanes per op, 1.69 with 8 and 1.39 with 4; an earlier run had 16 lanes between 32 and 8,
 * and 2 lanes slower than 4.
 */
export const LOCKED_TILE = 4;

/** Rounds a group retries ops whose locks were taken before it reports them pending. */
export const LOCKED_ROUNDS = 4096;

/**
 * Pass B: the inserts pass A deferred (both buckets full, or a claim that waited too long), each
 * run under the locks of its two buckets by `hv_locked_insert` (replace, claim, cuckoo eviction,
 * stash). Nothing but these inserts runs during the pass, so moving keys never hides them from a
 * find. Also the stash drain (mode 3): every stash entry tries to move into the table after a
 * resize (jobs = stash slots), leaving its stash slot only once it is in the table.
 * Same bindings as pass A.
 */
export const lockedPassKernel = defineKernel({
  name: 'hive.locked-pass',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, tile: LOCKED_TILE, ...ONE_WINDOW },
  params: hiveParams,
  bindings: opPassBindings,
  source: (decls, { subgroups, tile, ...w }) =>
    composeWgsl(
      /* wgsl */ `
${decls}

/**
 * Job j's entry of the deferred list: a stride permutation of 0..jobs-1 (j * S mod jobs, S prime,
 * so coprime with jobs unless it divides it; up to 2^22 jobs, where j * S fits 32 bits).
 * Neighbours in the list often share a first bucket (the bulk build spills a full bucket's
 * overflow together); run side by side they fought over its lock (on an H200, 963K lock
 * conflicts for 3M locked inserts), spread over the pass they do not.
 */
fn hv_spread(j: u32, jobs: u32) -> u32 {
  if (jobs > 4194304u || jobs % 1021u == 0u) { return j; }
  return (j * 1021u) % jobs;
}

var<workgroup> wg_jobs: u32;
var<workgroup> wg_groups: atomic<u32>;
// An op that lost its locks LOCKED_ROUNDS rounds in a row: reported with CONTENDED_FLAG, run again by the host.
const R_GAVE_UP: u32 = 6u;

${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, ${tile}u);
  let drain = params.mode == MODE_DRAIN;
  if (lid == 0u) {
    wg_jobs = select(min(atomicLoad(&lists[L_DEFERRED]), params.list_cap), params.n, drain);
  }
  let jobs = workgroupUniformLoad(&wg_jobs);
  // The jobs are spread over every group of the dispatch, as few to a group as they allow: a group
  // runs its ops one after the other, each a chain of dependent round trips (locks, scans, moves),
  // so a small batch's few hundred deferred ops, 32 to a group, kept most of the GPU idle for
  // hundreds of microseconds. Groups number themselves (one workgroup atomic each), assuming
  // nothing about how invocations form subgroups. More ops at once on a few hot buckets fight
  // harder for their locks; those that give up are reported with CONTENDED_FLAG and run again.
  var gidx = 0u;
  if (cg_lane() == 0u) { gidx = atomicAdd(&wg_groups, 1u); }
  gidx = cg_broadcast(gidx, 0u);
  let groups_per_wg = ${WORKGROUP_SIZE}u / cg_size();
  let total_groups = grid_threads(nwg, ${WORKGROUP_SIZE}u) / cg_size();
  let per = clamp((jobs + total_groups - 1u) / total_groups, 1u, cg_size());
  let group = grid_workgroup(wid, nwg) * groups_per_wg + gidx;
  for (var first = group * per; first < jobs; first += total_groups * per) {
    let j = select(jobs, first + cg_lane(), cg_lane() < per);
    var pending = false;
    var i = 0u;
    var src = NONE;
    var key = EMPTY;
    var value = 0u;
    var op = OP_INSERT;
    var b1 = 0u;
    var b2 = 0u;
    if (j < jobs) {
      if (drain) {
        src = params.nalloc * 32u + j;
        key = atomicLoad(&slots[hv_kw(src)]);
        value = atomicLoad(&slots[hv_vw(src)]);
        pending = key < TOMBSTONE;
      } else {
        i = atomicLoad(&lists[LIST_HEADER + L_DEFERRED * params.list_cap + hv_spread(j, jobs)]);
        key = keys[i];
        value = values[i];
        op = select(params.mode, ops[i], params.mode == MODE_APPLY);
        pending = true;
      }
      b1 = hv_b1(key);
      b2 = hv_b2(key);
    }
    var result = R_RETRY;
    var lost = 0u;
    for (var round = 1u; ; round++) {
      let todo = cg_ballot(pending);
      if (cg_mask_empty(todo)) { break; }
      if (round > LOCKED_ROUNDS) {
        if (pending) { result = R_GAVE_UP; pending = false; }
        break;
      }
      // At most one attempt per op and round. After losing a lock, an op tries again only when its
      // first bucket's lock looks free (test before test-and-set: the read also makes a skipped
      // round last a round trip, where it would otherwise spin through the round budget in
      // microseconds) and then only with probability 2^-lost (up to 1/32), so that dozens of ops on
      // a few hot buckets thin out instead of knocking each other's paths down forever.
      var attempt = pending && round == 1u;
      if (pending && round > 1u) {
        let lock_free = (atomicLoad(&masks[params.lock_base + min(b1, b2)]) & LOCK_BIT) == 0u;
        let coin = hash_fmix32(key ^ (round * 0x9e3779b9u)) & ((1u << min(lost, 5u)) - 1u);
        attempt = lock_free && coin == 0u;
      }
      var left = cg_ballot(attempt);
      loop {
        if (cg_mask_empty(left)) { break; }
        let leader = cg_first_lane(left);
        left &= ~cg_mask_lane(leader);
        let r = hv_locked_insert(
          cg_broadcast(key, leader), cg_broadcast(value, leader), cg_broadcast(op, leader) == OP_INSERT_OR_ASSIGN,
          cg_broadcast(b1, leader), cg_broadcast(b2, leader), leader, drain, round);
        if (cg_lane() == leader) {
          if (r != R_RETRY) {
            result = r;
            pending = false;
          } else {
            lost += 1u;
          }
        }
      }
    }
    if (j < jobs && result != R_RETRY) {
      if (drain) {
        if (result == R_INSERTED) {
          // In the table now: free the stash slot.
          atomicStore(&slots[hv_kw(src)], EMPTY);
          atomicOr(&masks[src / 32u], 1u << (src % 32u));
          count(T_STASH_OUT, 1u);
        }
      } else {
        let added = result == R_INSERTED || result == R_STASHED;
        if (added) { count(T_ADDED, 1u); }
        if (result == R_STASHED) { count(T_STASH_IN, 1u); }
        if (result == R_FAILED) { report_failure(i); }
        if (result == R_GAVE_UP) { report_failure(i | CONTENDED_FLAG); }
        if (params.mode == MODE_APPLY) { out[i] = vec2<u32>(0u, select(0u, 1u, added)); }
      }
    }
  }
  flush_tallies(lid);
}
`,
      { modules: [gridModule, cuckooModule(subgroups), listsModule], constants: { LOCKED_ROUNDS }, windows: opPassWindows(w) },
    ),
});
