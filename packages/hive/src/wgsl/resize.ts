import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeEntryParams, entryPoint, gridModule, gridStrideLoop, unrolled } from '@gpuhash/kernels';
import { HOMES } from '../split-pointer';
import { commonModule, WORKGROUP_SIZE } from './common';
import { overflowModule } from './overflow';
import { hiveParams } from './params';
import { rowBallotModule } from './wcme';
import { ONE_WINDOW, type SlotWindows, slotsBinding, slotWindows } from './windows';

/** The table, written: its slots and its masks (free masks, then lock words). */
const tableBindings = (v: SlotWindows) => ({
  params: uniform(),
  slots: slotsBinding('read_write', 'atomic<u32>', v),
  masks: storage('read_write', 'atomic<u32>'),
});

/** The homes 0 .. HOMES-1, for the run-time picks below. */
const homes = Array.from({ length: HOMES }, (_, h) => h);
/** Per home h: the movers whose home is h (row ballots into by_home_h; scalars, since a vector or array indexed at run time spills on NVIDIA). */
const homeDecls = unrolled(HOMES, (h) => `      var by_home_${h} = 0u;`);
const homeBallots = unrolled(HOMES, (h) => `        by_home_${h} |= hv_row_ballot(go && h == ${h}u, step);`);
const homeFills = unrolled(HOMES, (h) => `hv_home_fill(by_home_${h}, ${h}u)`, ' | ');
const homeFirsts = unrolled(HOMES, (h) => `hv_lowest_bits(by_home_${h}, HOME_SLOTS)`, ' | ');
/** by_home_h for a run-time h. */
const homeSelect = homes.slice(1).reduce((acc, h) => `select(${acc}, by_home_${h}, h == ${h}u)`, 'by_home_0');
/** The home of mover slot c, from the by_home ballots. */
const moverHome = homes.slice(1).reduce((acc, h) => `select(${acc}, ${h}u, ((by_home_${h} >> c) & 1u) == 1u)`, '0u');
/**
 * Statements that walk the crowded movers in \`mask\` in slot order, each taking from \`left\` (a var)
 * the first spare slot from its home on, around the bucket: the slot a claim would take
 * (\`hv_pick_slot\`; the home itself is full, its own movers took it).
 */
const walkCrowded = (mask: string) => /* wgsl */ `{
            var walk = ${mask};
            loop {
              if (walk == 0u) { break; }
              let c = firstTrailingBit(walk);
              walk &= walk - 1u;
              left &= ~hv_pick_slot(left, ${moverHome});
            }
          }`;

const moveCode = /* wgsl */ `
fn hv_move_out(src: u32, dst: u32) {
  atomicStore(&slots[hv_vw(dst)], atomicLoad(&slots[hv_vw(src)]));
  atomicStore(&slots[hv_kw(dst)], atomicLoad(&slots[hv_kw(src)]));
  atomicStore(&slots[hv_kw(src)], EMPTY);
}`;

/**
 * Expansion (split phase): a batch of K source buckets s = aux0 .. aux0+n-1, each with its fresh
 * partner t = s + n0, one group per pair. params.split is the split pointer after the batch, so
 * hv_b1/hv_b2 give each key's new candidates: a key stays when s is still one of them, else it
 * moves to t (its hash's next bit picks t; t is empty, so movers take slots of their homes). Movers
 * crowded out of their home (more than HOME_SLOTS of one home) take, in slot order, the slots a
 * claim would give them: the first spare one from their home on, around the bucket, so a find
 * reads them in the next home or soon after, as it reads keys that pass A placed. (Until this
 * they took the lowest spare slots; the difference is only where finds of those keys look first.)
 */
export const splitKernel = defineKernel({
  name: 'hive.split',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, ...ONE_WINDOW },
  params: hiveParams,
  bindings: tableBindings,
  source: (decls, { subgroups, ...w }) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${moveCode}

${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }))} {
  cg_init(cg_sg_lane, cg_sg_size);
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let j = base + lid;
    var todo = cg_ballot(j < params.n);
    loop {
      if (cg_mask_empty(todo)) { break; }
      let leader = cg_first_lane(todo);
      todo &= ~cg_mask_lane(leader);
      let s = params.aux0 + cg_broadcast(j, leader);
      let t = s + params.n0;
      var movers = 0u;
      // Movers by home: t is empty, so each takes a slot of its home while that has room.
${homeDecls}
      for (var step = 0u; step < cg_steps(32u); step++) {
        let slot = step * cg_size() + cg_lane();
        var go = false;
        var h = 0u;
        if (slot < 32u) {
          let k = atomicLoad(&slots[hv_key_word(s, slot)]);
          go = k < TOMBSTONE && hv_b1(k) != s && hv_b2(k) != s;
          h = hv_home(k);
          // A key that stays in s although its first bucket is now t: t answers for it.
          if (k < TOMBSTONE && !go && hv_b1(k) == t) { atomicOr(&masks[params.lock_base + t], OVERFLOW_BIT | hv_far_bit(k)); }
        }
        movers |= hv_row_ballot(go, step);
${homeBallots}
      }
      // The first HOME_SLOTS movers of each home take its slots; the rest, in slot order, take the
      // spare slots (those no home's own movers take) in claim order.
      let home_used = ${homeFills};
      let crowded = movers & ~(${homeFirsts});
      let spare = ~home_used;
      for (var step = 0u; step < cg_steps(32u); step++) {
        let slot = step * cg_size() + cg_lane();
        if (slot < 32u && ((movers >> slot) & 1u) == 1u) {
          let k = atomicLoad(&slots[hv_key_word(s, slot)]);
          let h = hv_home(k);
          var dst = 0u;
          if (((crowded >> slot) & 1u) == 1u) {
            // What the crowded movers before this one leave, then this one's pick.
            var left = spare;
            ${walkCrowded('crowded & hv_low_mask(slot)')}
            dst = firstTrailingBit(hv_pick_slot(left, h));
            atomicOr(&masks[params.lock_base + t], hv_away_bits(k));
          } else {
            dst = HOME_SLOTS * h + countOneBits(${homeSelect} & hv_low_mask(slot));
          }
          hv_move_out(s * 32u + slot, t * 32u + dst);
        }
      }
      if (cg_lane() == leader) {
        // t answers for the keys of s's that are now its own first-bucket keys, wherever they are.
        atomicOr(&masks[params.lock_base + t], atomicLoad(&masks[params.lock_base + s]) & PLACEMENT_BITS);
        atomicOr(&masks[s], movers);
        // t's free slots: the spare ones no crowded mover took.
        var left = spare;
        ${walkCrowded('crowded')}
        atomicStore(&masks[t], left);
      }
    }
  }
}
`,
      { modules: [gridModule, rowBallotModule(subgroups), overflowModule], windows: slotWindows(w, { slots: 'atomic<u32>' }) },
    ),
});

/**
 * Contraction, first half: pair j merges partner t = aux0 - j back into s = t - n0. A pair whose
 * keys do not fit in s's free slots aborts the merge (Hive IV-C2): the highest failing t + 1 is
 * kept in counters[C_MERGE_MARKER], and no pair at or below it moves (the buckets must shrink from
 * the top).
 */
export const mergeCheckKernel = defineKernel({
  name: 'hive.merge-check',
  workgroupSize: WORKGROUP_SIZE,
  params: hiveParams,
  bindings: { params: uniform(), masks: storage('read_write', 'atomic<u32>'), counters: storage('read_write', 'atomic<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('j', 'params.n', WORKGROUP_SIZE)} {
    let t = params.aux0 - j;
    let s = t - params.n0;
    let used = countOneBits(~atomicLoad(&masks[t]));
    if (used > countOneBits(atomicLoad(&masks[s]))) { atomicMax(&counters[C_MERGE_MARKER], t + 1u); }
  }
}
`,
      { modules: [gridModule, commonModule] },
    ),
});

/**
 * Contraction, second half: every pair above the marker moves t's keys into s's free slots
 * (the r-th key of t takes the r-th free slot of s), one group per pair.
 */
export const mergeKernel = defineKernel({
  name: 'hive.merge',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, ...ONE_WINDOW },
  params: hiveParams,
  bindings: (v: SlotWindows) => ({ ...tableBindings(v), counters: storage('read_write', 'atomic<u32>') }),
  source: (decls, { subgroups, ...w }) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${moveCode}

${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }))} {
  cg_init(cg_sg_lane, cg_sg_size);
  let marker = atomicLoad(&counters[C_MERGE_MARKER]);
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let j = base + lid;
    var todo = cg_ballot(j < params.n && params.aux0 - j >= marker);
    loop {
      if (cg_mask_empty(todo)) { break; }
      let leader = cg_first_lane(todo);
      todo &= ~cg_mask_lane(leader);
      let t = params.aux0 - cg_broadcast(j, leader);
      let s = t - params.n0;
      let used = ~atomicLoad(&masks[t]);
      let free = atomicLoad(&masks[s]);
      for (var step = 0u; step < cg_steps(32u); step++) {
        let slot = step * cg_size() + cg_lane();
        if (slot < 32u && ((used >> slot) & 1u) == 1u) {
          let dst = hv_nth_bit(free, countOneBits(used & hv_low_mask(slot)));
          // s may be the key's first bucket now: set the key's away bit when dst is not its home.
          let k = atomicLoad(&slots[hv_key_word(t, slot)]);
          if (dst / HOME_SLOTS != hv_home(k)) { atomicOr(&masks[params.lock_base + s], hv_away_bits(k)); }
          hv_move_out(t * 32u + slot, s * 32u + dst);
        }
      }
      if (cg_lane() == leader) {
        // Keys whose first bucket was t now have s.
        atomicOr(&masks[params.lock_base + s], atomicLoad(&masks[params.lock_base + t]) & PLACEMENT_BITS);
        atomicStore(&masks[params.lock_base + t], 0u);
        atomicStore(&masks[s], free & ~hv_lowest_bits(free, countOneBits(used)));
        atomicStore(&masks[t], 0xffffffffu);
      }
    }
  }
}
`,
      { modules: [gridModule, rowBallotModule(subgroups), overflowModule], windows: slotWindows(w, { slots: 'atomic<u32>' }) },
    ),
});

/**
 * Moves the stash into reallocated storage: each live entry of the old stash (jobs = its slots)
 * takes a free slot of its line in the new one. The new stash has as many lines or more (a power
 * of two multiple), so each new line receives keys of a single old line and never overflows.
 * params describe the new storage. `old_stash` holds the old stash lines alone (copied out of the
 * old slots first), so the kernel binds one table's windows, not two.
 */
export const relocateStashKernel = defineKernel({
  name: 'hive.relocate-stash',
  workgroupSize: WORKGROUP_SIZE,
  params: hiveParams,
  variant: ONE_WINDOW,
  bindings: (v: SlotWindows) => ({
    params: uniform(),
    old_stash: storage('read', 'u32'),
    slots: slotsBinding('read_write', 'atomic<u32>', v),
    masks: storage('read_write', 'atomic<u32>'),
  }),
  source: (decls, w) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('j', 'params.n', WORKGROUP_SIZE)} {
    let key = old_stash[hv_kw(j)];
    if (key >= TOMBSTONE) { continue; }
    let line = hv_stash_bucket(key);
    var seen = atomicLoad(&masks[line]);
    loop {
      if (seen == 0u) { break; } // cannot happen (see above); the key would be lost, so the host checks the count
      let bit = 1u << firstTrailingBit(seen);
      let old = atomicAnd(&masks[line], ~bit);
      if ((old & bit) != 0u) {
        let at = line * 32u + firstTrailingBit(bit);
        atomicStore(&slots[hv_vw(at)], old_stash[hv_vw(j)]);
        atomicStore(&slots[hv_kw(at)], key);
        break;
      }
      seen = old & ~bit;
    }
  }
}
`,
      { modules: [gridModule, commonModule], windows: slotWindows(w, { slots: 'atomic<u32>' }) },
    ),
});
