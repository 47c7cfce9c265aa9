import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeEntryParams, entryPoint, gridModule, type WgslModule } from '@gpuhash/kernels';
import { WORKGROUP_SIZE } from './common';
import { cooperativeVariant } from './cooperative-variant';
import { listsModule } from './lists';
import { overflowModule } from './overflow';
import { hiveParams } from './params';
import { talliesModule } from './tallies';
import { homeScanModule, lookupLanesModule, PASS_A_LINES, wcmeModule } from './wcme';
import { ONE_WINDOW, type SlotWindows, slotsBinding, slotWindows } from './windows';

/** Rounds a group re-checks claims that wait on earlier, unpublished claims before deferring them. */
export const CHECK_ROUNDS = 4096;
/** Claim attempts per op (each one atomic) before it is deferred to the locked pass. */
export const CLAIM_ROUNDS = 1024;

/**
 * The bindings every op pass (A, B and the home pass) shares; insert batches bind keys as ops (both
 * read-only) and a stand-in buffer as out.
 */
export const opPassBindings = (v: SlotWindows) => ({
  params: uniform(),
  slots: slotsBinding('read_write', 'atomic<u32>', v),
  masks: storage('read_write', 'atomic<u32>'),
  ops: storage('read', 'u32'),
  keys: storage('read', 'u32'),
  values: storage('read', 'u32'),
  out: storage('read_write', 'vec2<u32>'),
  counters: storage('read_write', 'atomic<u32>'),
  lists: storage('read_write', 'atomic<u32>'),
});

/** The op passes' `windows` option: the slots, bound as words. */
export const opPassWindows = (v: SlotWindows) => slotWindows(v, { slots: 'atomic<u32>' });

/**
 * Appends, for two lists at once, \`entry[k]\` to list \`list[k]\` for every invocation of the
 * workgroup where \`pred[k]\` holds: a workgroup atomic per group and list, then one global atomic
 * per workgroup and list. Atomics on one word run one after another, and a global atomic per group
 * lands on the list's counter word from every group of a batch (2^17 groups for 2^22 ops): in a
 * mixed batch's home pass that cost 0.15 of its 0.37 ms (H100, 2^27 slots). Called by every
 * invocation of the workgroup in uniform control flow (it has barriers), with the same \`list\`.
 */
const pushWorkgroupCode = /* wgsl */ `
var<workgroup> hv_wg_push_count: array<atomic<u32>, 2>;
var<workgroup> hv_wg_push_base: array<u32, 2>;
fn hv_push_workgroup(list: vec2<u32>, pred: vec2<bool>, entry: vec2<u32>, lid: u32) {
  var at = vec2<u32>(0u);
  for (var k = 0u; k < 2u; k++) {
    let m = cg_ballot32(pred[k]);
    if (m != 0u) {
      let first = firstTrailingBit(m);
      var sub = 0u;
      if (cg_lane() == first) { sub = atomicAdd(&hv_wg_push_count[k], countOneBits(m)); }
      at[k] = cg_broadcast(sub, first) + countOneBits(m & hv_low_mask(cg_lane()));
    }
  }
  workgroupBarrier();
  if (lid < 2u) {
    let c = atomicLoad(&hv_wg_push_count[lid]);
    if (c != 0u) { hv_wg_push_base[lid] = atomicAdd(&lists[list[lid]], c); }
    atomicStore(&hv_wg_push_count[lid], 0u);
  }
  workgroupBarrier();
  for (var k = 0u; k < 2u; k++) {
    let a = hv_wg_push_base[k] + at[k];
    if (pred[k] && a < params.list_cap) { atomicStore(&lists[LIST_HEADER + list[k] * params.list_cap + a], entry[k]); }
  }
}`;

/** \`hv_push_workgroup\` (needs \`lists\` and \`params\`). */
export function pushWorkgroupModule(subgroups: boolean): WgslModule {
  return cooperativeVariant('hive.push-workgroup', subgroups, pushWorkgroupCode, { needs: ['params', 'lists'] });
}

/**
 * An erase in pass A, once its key is seen in global slot g: retire the slot (CAS the key word to
 * TOMBSTONE), do not free it, since pass A's claims rely on no slot turning free during the pass;
 * the release pass frees it after. True when this op erased the key (false: another op of the
 * batch did first); counts the erase, and a stash slot's leaving.
 */
const retireCode = /* wgsl */ `
fn hv_retire(g: u32, key: u32) -> bool {
  if (!hv_cas_key(g, key, TOMBSTONE)) { return false; }
  count(T_ERASED, 1u);
  if (g >= params.nalloc * 32u) { count(T_STASH_OUT, 1u); }
  return true;
}`;

/**
 * An erase where nothing claims slots (erase batches, the home pass of a mixed batch): CAS the key
 * word of global slot g from key to EMPTY, then set its free bit. True when this op erased the key;
 * counts the erase, and a stash slot's leaving.
 */
const freeCode = /* wgsl */ `
fn hv_free(g: u32, key: u32) -> bool {
  if (!hv_cas_key(g, key, EMPTY)) { return false; }
  atomicOr(&masks[g / 32u], 1u << (g % 32u));
  count(T_ERASED, 1u);
  if (g >= params.nalloc * 32u) { count(T_STASH_OUT, 1u); }
  return true;
}`;

/** \`hv_retire\` (needs \`slots\`, \`params\` and \`counters\`). */
export function retireModule(subgroups: boolean): WgslModule {
  return cooperativeVariant('hive.retire', subgroups, retireCode, { requires: [wcmeModule(subgroups), talliesModule], needs: ['params'] });
}

/** \`hv_free\` (needs \`slots\`, \`masks\`, \`params\` and \`counters\`). */
export function freeModule(subgroups: boolean): WgslModule {
  return cooperativeVariant('hive.free', subgroups, freeCode, {
    requires: [wcmeModule(subgroups), talliesModule],
    needs: ['params', 'masks'],
  });
}

/**
 * Pass A of insert, insertOrAssign and mixed batches (whose finds ran before, in the find kernel):
 * every op runs lock-free, one op per lane, its group of up to 32 lanes sharing the reads.
 *
 * 1. Scan (WCME, transposed): the group reads the ops' first buckets, all at once, then the second
 *    buckets of the ops not found, then the stash lines of those whose first bucket has the stash
 *    bit. An erase retires its match (key -> TOMBSTONE, freed after the batch); an insert that
 *    finds its key is done (insertOrAssign stores the value).
 * 2. Claim (WABC): each lane claims a slot for its own op with one atomicAnd on the bucket's free
 *    mask, a slot of the key's home (\`hv_home\`) while it has one (so most finds read 32 bytes);
 *    the free bits are first guessed from the scan (slots whose key word was EMPTY), then taken
 *    from what the atomic returned; the lane stores its value at once. (Gathering the claims of
 *    lanes on one bucket into one atomic merged almost nothing with millions of buckets and cost
 *    7% of the pass on an H200.) A bucket known full sends the op to its second bucket with no
 *    atomic; both full defers it to the locked pass B.
 * 3. Check, then publish: two ops inserting one new key could claim two slots. Claims on one mask
 *    are totally ordered, and a claim sees which slots were claimed before it, so each op waits
 *    until those earlier claims are published (re-reading them in later rounds of this loop, never
 *    spinning), and backs off if one holds its key; a claim in the second bucket waits on the
 *    whole (full) first bucket likewise. Then it publishes its key over the value. The op that
 *    claimed first wins; masks only lose free bits during the pass (nothing is freed until the
 *    release pass), which is what makes "earlier" well defined and the waits acyclic.
 * mode: 0 insert, 1 insertOrAssign, 2 apply (ops and out are real); aux0 = 1: the home view (step
 * 0, for tables under HOME_VIEW_BELOW, see engine.ts); aux1: the chunk's first batch
 * index; aux2 = 1: listed (ops holds a count and batch indices: the bulk build's spill, bulk.ts);
 * aux2 = 2: the rest list the home pass left (home-pass.ts; aux1 = 0, batch indices in the list).
 */
export const opPassKernel = defineKernel({
  name: 'hive.op-pass',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, ...ONE_WINDOW },
  params: hiveParams,
  bindings: opPassBindings,
  source: (decls, { subgroups, ...w }) =>
    composeWgsl(
      /* wgsl */ `
${decls}

const S_DONE: u32 = 0u;
const S_SCAN: u32 = 1u;
const S_CLAIM: u32 = 2u;
const S_CHECK: u32 = 3u;
const S_DEFER: u32 = 4u;

var<workgroup> wg_stash: u32;
var<workgroup> wg_listed: u32;

/** Re-reads the key words of bucket b's slots in \`mask\`: x: the first holding key (NONE if none); y: those still EMPTY. */
fn hv_recheck(b: u32, key: u32, mask: u32) -> vec2<u32> {
  var m = mask;
  var waiting = 0u;
  loop {
    if (m == 0u) { break; }
    let s = firstTrailingBit(m);
    m &= m - 1u;
    let k = atomicLoad(&slots[hv_key_word(b, s)]);
    if (k == key) { return vec2<u32>(b * 32u + s, 0u); }
    if (k == EMPTY) { waiting |= 1u << s; }
  }
  return vec2<u32>(NONE, waiting);
}

${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, 32u);
  if (lid == 0u) { wg_stash = atomicLoad(&counters[C_STASH]); }
  // Only this batch's erases change the stash count during the pass: reading it once is safe.
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  // Listed: entry j is batch index ops[1 + j], for j < ops[0] (aux2 = 1: the bulk build's spill),
  // or the rest list's entry j (aux2 = 2: what the home pass left; ops are the batch's own).
  let listed = params.aux2 != 0u;
  let rest = params.aux2 == 2u;
  if (lid == 0u) {
    wg_listed = 0xffffffffu;
    if (rest) {
      wg_listed = min(atomicLoad(&lists[L_REST]), params.list_cap);
    } else if (listed) {
      wg_listed = ops[0];
    }
  }
  let list_len = workgroupUniformLoad(&wg_listed);
  // A listed chunk past the list's end has nothing to do: its loop ends at once.
  let limit = select(params.n, min(params.n, list_len - min(list_len, params.aux1)), listed);
  let apply = params.mode == MODE_APPLY;
  ${chunkLoop('limit', WORKGROUP_SIZE)} {
    // This dispatch covers batch entries aux1 .. aux1 + n - 1 (large batches run in chunks).
    let local = base + lid;
    let j = params.aux1 + local;
    let live = local < params.n && j < list_len;
    var i = j;
    if (rest && live) {
      i = atomicLoad(&lists[LIST_HEADER + L_REST * params.list_cap + j]);
    } else if (listed && live) {
      i = ops[1u + j];
    }
    var st = S_DONE;
    var op = OP_FIND;
    var key = EMPTY;
    var value = 0u;
    var status = 0u;
    if (live) {
      key = keys[i];
      op = select(params.mode, ops[i], apply);
      if (key >= TOMBSTONE || op > OP_ERASE) {
        report_failure(i | RESERVED_FLAG);
      } else if (op != OP_FIND) {
        value = values[i];
        st = S_SCAN;
      }
    }
    let b1 = hv_b1(key);
    let b2 = hv_b2(key);
    let home = hv_home(key);
    var mine = NONE;
    var check1 = 0u;
    var check2 = 0u;

    // 0. The home view (inserts): the group reads its inserts' homes (a sector each) and lock
    // words. A key there is done; a key absent with its filter bits clear is absent from the table,
    // and claims a home slot its view saw EMPTY, in pick order, with no bucket scan. A copy of the
    // key that claimed before it took a slot earlier in pick order (every claim takes its first
    // free slot from the home, and nothing frees a slot during the pass), so in this home and EMPTY
    // in the view: check1 waits on those. The rest, and inserts whose home filled meanwhile, scan.
    let viewing = st == S_SCAN && op != OP_ERASE && params.aux0 != 0u;
    let view = hv_home_view(key, b1, viewing);
    if (viewing) {
      if (view.x != NONE) {
        if (op == OP_INSERT_OR_ASSIGN) { atomicStore(&slots[hv_vw(view.x)], value); }
        st = S_DONE;
      } else if (view.y == 0u) {
        let seen = view.z << (HOME_SLOTS * home);
        var left = seen;
        loop {
          if (left == 0u) { break; }
          let take = left & (0u - left);
          let old = atomicAnd(&masks[b1], ~take);
          if ((take & old) != 0u) {
            mine = b1 * 32u + firstTrailingBit(take);
            atomicStore(&slots[hv_vw(mine)], value);
            check1 = seen & ~old & (take - 1u);
            st = S_CHECK;
            break;
          }
          left &= old & ~take;
        }
      }
    }

    // 1. Scan (WCME): the first buckets, then the second buckets of ops not found whose first
    // bucket has overflowed or is full, then the stash lines the first buckets flag.
    let go = st == S_SCAN;
    let found = hv_lookup_lanes(key, go, b1, b2, stash_live, true);
    let at = found.at;
    let r1 = found.r1;
    let r2 = found.r2;
    let scanned2 = found.scanned2;
    var freed = NONE;
    if (go) {
      if (op == OP_ERASE) {
        if (at != NONE && hv_retire(at, key)) {
          status = 1u;
          freed = at;
        }
        st = S_DONE;
      } else if (at != NONE) {
        if (op == OP_INSERT_OR_ASSIGN) { atomicStore(&slots[hv_vw(at)], value); }
        st = S_DONE;
      } else {
        st = S_CLAIM;
      }
    }

    // 2. Claim: one atomicAnd per op and attempt, by the op's own lane.
    var goal = b1;
    var guess = ~(r1.x | r1.y);
    for (var round = 0u; round < CLAIM_ROUNDS && st == S_CLAIM; round++) {
      if (guess == 0u) {
        // Full (it stays full: nothing is freed during the pass).
        if (goal == b1 && b2 != b1) {
          goal = b2;
          guess = ~(r2.x | r2.y);
        } else {
          st = S_DEFER;
          break;
        }
      }
      // A second bucket not read (the first filled up after its scan): the locked pass decides.
      if (goal == b2 && !scanned2) {
        st = S_DEFER;
        break;
      }
      let take = hv_pick_slot(guess, home);
      let old = atomicAnd(&masks[goal], ~take);
      guess = old & ~take;
      if ((take & old) != 0u) {
        let slot = firstTrailingBit(take);
        mine = goal * 32u + slot;
        atomicStore(&slots[hv_vw(mine)], value);
        // Claimed before mine: whatever the atomic found taken.
        if (goal == b1) {
          check1 = ~old & ~r1.y;
        } else {
          check1 = ~r1.y;
          check2 = ~old & ~r2.y;
        }
        hv_placed(key, mine);
        st = S_CHECK;
      }
    }
    if (st == S_CLAIM) { st = S_DEFER; }

    // 3. Check the earlier claims, then publish or back off.
    for (var round = 0u; ; round++) {
      if (cg_ballot32(st == S_CHECK) == 0u) { break; }
      if (round >= CHECK_ROUNDS) {
        // Give the slot up and let the locked pass decide.
        if (st == S_CHECK) {
          atomicStore(&slots[hv_kw(mine)], TOMBSTONE);
          freed = mine;
          st = S_DEFER;
        }
        break;
      }
      if (st == S_CHECK) {
        var r = hv_recheck(b1, key, check1);
        var wait2 = 0u;
        if (r.x == NONE) {
          let r2b = hv_recheck(b2, key, check2);
          if (r2b.x != NONE) { r.x = r2b.x; } else { wait2 = r2b.y; }
        }
        if (r.x != NONE) {
          // An earlier claim holds this key: it wins; insertOrAssign still stores its value there.
          if (op == OP_INSERT_OR_ASSIGN) { atomicStore(&slots[hv_vw(r.x)], value); }
          atomicStore(&slots[hv_kw(mine)], TOMBSTONE);
          freed = mine;
          st = S_DONE;
        } else if ((r.y | wait2) != 0u) {
          check1 = r.y;
          check2 = wait2;
        } else {
          atomicStore(&slots[hv_kw(mine)], key);
          status = 1u;
          count(T_ADDED, 1u);
          st = S_DONE;
        }
      }
    }

    // 4. Retired slots to the release pass, deferred ops to pass B: one list reservation per
    // workgroup and list.
    hv_push_workgroup(vec2<u32>(L_FREED, L_DEFERRED), vec2<bool>(freed != NONE, st == S_DEFER), vec2<u32>(freed, i), lid);
    if (st == S_DEFER) { count(T_DEFERRED, 1u); }
    if (apply && live && st != S_DEFER && op != OP_FIND) { out[i] = vec2<u32>(0u, status); }
  }
  flush_tallies(lid);
}
`,
      {
        modules: [
          gridModule,
          lookupLanesModule(subgroups, PASS_A_LINES),
          homeScanModule(subgroups),
          wcmeModule(subgroups),
          talliesModule,
          listsModule,
          overflowModule,
          pushWorkgroupModule(subgroups),
          retireModule(subgroups),
        ],
        constants: { CHECK_ROUNDS, CLAIM_ROUNDS },
        windows: opPassWindows(w),
      },
    ),
});

export { WORKGROUP_SIZE };
