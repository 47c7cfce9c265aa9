import type { Kernel } from '@gpuhash/core';
import { composeWgsl, cooperativeEntryParams, gridModule } from '@gpuhash/kernels';
import { WORKGROUP_SIZE } from './common';
import { cachedKernel, chunkLoop, entryPoint } from './kernel-cache';
import { talliesModule } from './tallies';
import { wabcModule } from './wabc';
import { wcmeModule } from './wcme';

/** Rounds a group re-checks claims that wait on earlier, unpublished claims before deferring them. */
export const CHECK_ROUNDS = 4096;
/** WABC rounds per group before the remaining claims are deferred to the locked pass. */
export const CLAIM_ROUNDS = 1024;

/** The bindings every op pass (A and B) shares; insert batches bind keys as ops and a dummy as out. */
export const opBindings = /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> masks: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read> ops: array<u32>;
@group(0) @binding(4) var<storage, read> keys: array<u32>;
@group(0) @binding(5) var<storage, read> values: array<u32>;
@group(0) @binding(6) var<storage, read_write> out: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> lists: array<atomic<u32>>;`;

/**
 * Pass A of insert, insertOrAssign and mixed batches: every op runs lock-free, a cooperative group
 * taking its lanes' ops one leader at a time (WCME) or one bucket at a time (WABC).
 *
 * 1. Scan (WCME): the group reads the op's two buckets, and its stash line when the stash holds
 *    keys; a find returns the first match, an erase retires it (key -> TOMBSTONE, freed after the
 *    batch), an insert that finds its key is done (insertOrAssign stores the value).
 * 2. Claim (WABC): lanes wanting a slot in the same bucket share one atomicAnd on its free mask;
 *    the value is stored at once. A full first bucket sends the op to its second bucket; both
 *    full defers it to the locked pass B.
 * 3. Check, then publish: two ops inserting one new key could claim two slots. Claims on one mask
 *    are totally ordered, and a claim sees which slots were claimed before it, so each op waits
 *    until those earlier claims are published (re-reading them in later rounds of this loop, never
 *    spinning), and backs off if one holds its key; a claim in the second bucket waits on the
 *    whole (full) first bucket likewise. Then it publishes its key over the value. The op that
 *    claimed first wins; masks only lose free bits during the pass (nothing is freed until the
 *    release pass), which is what makes "earlier" well defined and the waits acyclic.
 * mode: 0 insert, 1 insertOrAssign, 2 apply (ops and out are real); aux1: the chunk's first batch index.
 */
export function opPassKernel(subgroups: boolean): Kernel {
  return cachedKernel('op-pass', subgroups ? 'sg' : 'fb', () =>
    composeWgsl(
      /* wgsl */ `
${opBindings}

const S_DONE: u32 = 0u;
const S_SCAN: u32 = 1u;
const S_CLAIM: u32 = 2u;
const S_CHECK: u32 = 3u;
const S_DEFER: u32 = 4u;

var<workgroup> wg_stash: u32;

${entryPoint(cooperativeEntryParams({ subgroups }))} {
  cg_init(cg_sg_lane, cg_sg_size);
  if (lid == 0u) { wg_stash = atomicLoad(&counters[C_STASH]); }
  // Only this batch's erases change the stash count during the pass: reading it once is safe.
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  let apply = params.mode == MODE_APPLY;
  ${chunkLoop('params.n')} {
    // This dispatch covers batch entries aux1 .. aux1 + n - 1 (large batches run in chunks).
    let local = base + lid;
    let i = params.aux1 + local;
    var st = S_DONE;
    var op = OP_FIND;
    var key = EMPTY;
    var value = 0u;
    var b1 = 0u;
    var b2 = 0u;
    var found_value = 0u;
    var status = 0u;
    if (local < params.n) {
      key = keys[i];
      op = select(params.mode, ops[i], apply);
      if (key >= TOMBSTONE || op > OP_ERASE) {
        report_failure(i | RESERVED_FLAG);
      } else {
        value = values[i];
        b1 = hv_b1(key);
        b2 = hv_b2(key);
        st = S_SCAN;
      }
    }

    // 1. Scan: WCME over both candidate buckets and the stash line.
    var pub1 = 0u;
    var pub2 = 0u;
    var todo = cg_ballot(st == S_SCAN);
    loop {
      if (cg_mask_empty(todo)) { break; }
      let leader = cg_first_lane(todo);
      todo &= ~cg_mask_lane(leader);
      let k = cg_broadcast(key, leader);
      let c1 = cg_broadcast(b1, leader);
      let c2 = cg_broadcast(b2, leader);
      var at = NONE;
      let r1 = hv_scan(c1, k);
      var r2 = r1;
      if (r1.x != 0u) {
        at = c1 * 32u + firstTrailingBit(r1.x);
      } else if (c2 != c1) {
        r2 = hv_scan(c2, k);
        if (r2.x != 0u) { at = c2 * 32u + firstTrailingBit(r2.x); }
      }
      if (at == NONE && stash_live) {
        let line = hv_stash_bucket(k);
        let rs = hv_scan(line, k);
        if (rs.x != 0u) { at = line * 32u + firstTrailingBit(rs.x); }
      }
      if (cg_lane() == leader) {
        if (op == OP_FIND) {
          if (at != NONE) {
            found_value = atomicLoad(&slots[at * 2u + 1u]);
            status = 1u;
          }
          st = S_DONE;
        } else if (op == OP_ERASE) {
          // Retire, do not free: no slot is reused while this batch may still read it.
          if (at != NONE && hv_cas_key(at, key, TOMBSTONE)) {
            status = 1u;
            count(T_ERASED, 1u);
            if (at >= params.nalloc * 32u) { count(T_STASH_OUT, 1u); }
            push_freed(at);
          }
          st = S_DONE;
        } else if (at != NONE) {
          if (op == OP_INSERT_OR_ASSIGN) { atomicStore(&slots[at * 2u + 1u], value); }
          st = S_DONE;
        } else {
          pub1 = r1.y;
          pub2 = r2.y;
          st = S_CLAIM;
        }
      }
    }

    // 2. Claim: WABC, one atomic per group and bucket.
    var goal_bucket = b1;
    var mine = NONE;
    var check1 = 0u;
    var check2 = 0u;
    for (var round = 0u; round < CLAIM_ROUNDS; round++) {
      let want = cg_ballot(st == S_CLAIM);
      if (cg_mask_empty(want)) { break; }
      let leader = cg_first_lane(want);
      let c = cg_broadcast(goal_bucket, leader);
      let joiners = cg_ballot(st == S_CLAIM && goal_bucket == c);
      let r = hv_wabc(c, cg_popcount(joiners), leader);
      if (st == S_CLAIM && goal_bucket == c) {
        let rank = cg_rank(joiners);
        if (rank < countOneBits(r.x)) {
          let slot = hv_nth_bit(r.x, rank);
          mine = c * 32u + slot;
          atomicStore(&slots[mine * 2u + 1u], value);
          // Claimed before mine: taken before the atomic, or handed to a lower rank in it.
          let before = ~r.y | (r.x & hv_low_mask(slot));
          if (c == b1) {
            check1 = before & ~pub1;
          } else {
            check1 = ~pub1;
            check2 = before & ~pub2;
          }
          st = S_CHECK;
        } else if (r.z == 0u) {
          // Full (it stays full: nothing is freed during the pass).
          if (c == b1 && b2 != b1) { goal_bucket = b2; } else { st = S_DEFER; }
        }
      }
    }
    if (st == S_CLAIM) { st = S_DEFER; }

    // 3. Check the earlier claims, then publish or back off.
    for (var round = 0u; ; round++) {
      let pending = cg_ballot(st == S_CHECK);
      if (cg_mask_empty(pending)) { break; }
      if (round >= CHECK_ROUNDS) {
        // Give the slot up and let the locked pass decide.
        if (st == S_CHECK) {
          atomicStore(&slots[mine * 2u], TOMBSTONE);
          push_freed(mine);
          st = S_DEFER;
        }
        break;
      }
      var left = pending;
      loop {
        if (cg_mask_empty(left)) { break; }
        let leader = cg_first_lane(left);
        left &= ~cg_mask_lane(leader);
        let k = cg_broadcast(key, leader);
        let c1 = cg_broadcast(b1, leader);
        let c2 = cg_broadcast(b2, leader);
        let m1 = cg_broadcast(check1, leader);
        let m2 = cg_broadcast(check2, leader);
        var r1 = vec2<u32>(0u, 0u);
        var r2 = vec2<u32>(0u, 0u);
        if (m1 != 0u) { r1 = hv_check(c1, k, m1); }
        if (m2 != 0u) { r2 = hv_check(c2, k, m2); }
        if (cg_lane() == leader) {
          if ((r1.x | r2.x) != 0u) {
            // An earlier claim holds this key: it wins; insertOrAssign still stores its value there.
            if (op == OP_INSERT_OR_ASSIGN) {
              let at = select(c2 * 32u + firstTrailingBit(r2.x), c1 * 32u + firstTrailingBit(r1.x), r1.x != 0u);
              atomicStore(&slots[at * 2u + 1u], value);
            }
            atomicStore(&slots[mine * 2u], TOMBSTONE);
            push_freed(mine);
            st = S_DONE;
          } else if ((r1.y | r2.y) != 0u) {
            check1 = r1.y;
            check2 = r2.y;
          } else {
            atomicStore(&slots[mine * 2u], key);
            status = 1u;
            count(T_ADDED, 1u);
            st = S_DONE;
          }
        }
      }
    }

    // 4. Defer what is left to the locked pass: one list reservation per group.
    let deferred = cg_ballot(st == S_DEFER);
    if (!cg_mask_empty(deferred)) {
      let first = cg_first_lane(deferred);
      var at = 0u;
      if (cg_lane() == first) { at = atomicAdd(&lists[L_DEFERRED], cg_popcount(deferred)); }
      at = cg_broadcast(at, first);
      if (st == S_DEFER) {
        let pos = at + cg_rank(deferred);
        if (pos < params.list_cap) { atomicStore(&lists[LIST_HEADER + L_DEFERRED * params.list_cap + pos], i); }
        count(T_DEFERRED, 1u);
      }
    }
    if (apply && local < params.n && st != S_DEFER) { out[i] = vec2<u32>(found_value, status); }
  }
  flush_tallies(lid);
}
`,
      {
        modules: [gridModule, wcmeModule(subgroups), wabcModule(subgroups), talliesModule],
        constants: { CHECK_ROUNDS, CLAIM_ROUNDS },
      },
    ),
  );
}

export { WORKGROUP_SIZE };
