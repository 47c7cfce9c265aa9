import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, entryPoint, gridModule, workgroupAppendModule } from '@gpuhash/kernels';
import { exactRoomModule, hintedRoomModule, hortonFastModule, talliesModule } from './insert';
import { hortonParams, WORKGROUP_SIZE } from './params';

/**
 * The spill passes: the keys the fast pass could not place in slots 0..6 of their primary bucket,
 * placed without locks before the locked rounds see what is left. They run as dispatches of their
 * own, so each reads a state no pass of its own kind is changing in a way that matters:
 *
 * 1. **Slot 7** (`spillSlotKernel`). `spill[x]` counts the keys that spilled from Type A bucket x.
 *    One spilled key takes slot 7 (x stays Type A). Two or more make x Type B: its remap word is
 *    zeroed and slot 7's key word becomes REMAP, unless x holds a secondary key (the paper's rule:
 *    a bucket converts only when no secondary key in it can move out; the rounds try that move).
 * 2. **Secondary placement** (`spillPlaceKernel`, run twice). A key whose primary bucket is Type B
 *    and full sets its remap entry, if unset, to the least-loaded of its secondary buckets (a CAS
 *    on the remap word: keys of one entry agree on the first function set), then claims a free
 *    slot there in slot order. The second run first points an entry whose bucket filled before any
 *    key of it got in at another candidate (REPOINT). Copies of one key follow one entry to one bucket and race for one first free
 *    slot, so a key is never stored twice. Every primary key of the batch was placed by the fast
 *    pass or pass 1, so a secondary key takes only a slot no primary key of this batch wants.
 *
 * BCHT mode has one pass instead (`bchtSecondKernel`): a key the fast pass left because its other
 * bucket was emptier than its tie bucket claims a slot there, unless a copy of it reached the tie
 * bucket (the fast pass adds keys to their tie buckets only, this pass to the other only).
 * Keys still without a slot go on to the locked rounds.
 */

const entry = entryPoint(WORKGROUP_SIZE);
/** Claims a key of the hinted placement tries, repointing its entry between them. */
export const HINTED_ATTEMPTS = 4;
const atomicsRW = storage('read_write', 'atomic<u32>');
const words = storage('read', 'u32');

const queueBindings = {
  params: uniform(),
  buckets: atomicsRW,
  keys: words,
  values: words,
  queue_in: words,
  queue_out: atomicsRW,
  counters: atomicsRW,
} as const;

/** A pass over the queued keys: `body` sets r (INSERTED, EXISTED or RETRY) for key i. */
function queuePass(decls: string, body: string): string {
  return /* wgsl */ `
${decls}
struct Cas { old_value: u32, exchanged: bool }
// Compare-exchange that retries spurious failures (a bounded number of times).
fn cas(w: u32, expected: u32, desired: u32) -> Cas {
  var c = atomicCompareExchangeWeak(&buckets[w], expected, desired);
  for (var k = 0u; k < 16u && !c.exchanged && c.old_value == expected; k++) {
    c = atomicCompareExchangeWeak(&buckets[w], expected, desired);
  }
  return Cas(c.old_value, c.exchanged);
}
${entry} {
  let n = min(queue_in[0], arrayLength(&queue_in) - 1u);
  ${chunkLoop('n', WORKGROUP_SIZE)} {
    let j = base + lid;
    var i = 0u;
    var r = EXISTED;
    if (j < n) {
      i = queue_in[1u + j];
      let key = keys[i];
      r = RETRY;
      ${body}
      if (r == INSERTED) { count(T_ADDED, 1u); }
    }
    append_queue_out(r == RETRY, i, lid);
  }
  flush_tallies(lid);
}`;
}

export const spillSlotKernel = defineKernel({
  name: 'horton.spill-slot',
  workgroupSize: WORKGROUP_SIZE,
  variant: { assign: false },
  params: hortonParams,
  bindings: { ...queueBindings, spill: words },
  source: (decls, v) =>
    composeWgsl(
      queuePass(
        `${decls}
// Whether Type A bucket x holds a key whose primary bucket is another one.
fn holds_secondary(x: u32) -> bool {
  for (var s = 0u; s < 7u; s++) {
    let k = key_at(x, s);
    if (!is_reserved(k) && primary_of(k) != x) { return true; }
  }
  return false;
}`,
        /* wgsl */ `
    let x = primary_of(key);
    let spilled = spill[x];
    if (spilled == 1u) {
      let c = cas(16u * x + 14u, EMPTY, key);
      if (c.exchanged) {
        atomicStore(&buckets[16u * x + 15u], values[i]);
        r = INSERTED;
      } else if (c.old_value == key) {
        if (ASSIGN) { store_value(x, 7u, values[i]); }
        r = EXISTED;
      }
    } else if (spilled >= 2u && key_at(x, 7u) == EMPTY && !holds_secondary(x)) {
      // Every spilled key of x stores the same zero before trying the one conversion.
      atomicStore(&buckets[16u * x + 15u], 0u);
      if (cas(16u * x + 14u, EMPTY, REMAP).exchanged) { count(T_TO_B, 1u); }
    }`,
      ),
      {
        modules: [gridModule, hortonFastModule, exactRoomModule, talliesModule, workgroupAppendModule('queue_out')],
        constants: { ASSIGN: v.assign, PLAN: false },
      },
    ),
});

/**
 * With \`hinted\` (after the bulk build, which binds its room hints as \`hints\`), the room of a
 * bucket is read from the hints and every claim takes one from its bucket's.
 */
export const spillPlaceKernel = defineKernel({
  name: 'horton.spill-place',
  workgroupSize: WORKGROUP_SIZE,
  variant: { assign: false, repoint: false, hinted: false },
  params: hortonParams,
  bindings: (v: { hinted: boolean }) => ({ ...queueBindings, ...(v.hinted ? { hints: atomicsRW } : {}) }),
  source: (decls, v) =>
    composeWgsl(
      queuePass(
        `${decls}
// The function of entry (x, t): the one set, else the least-loaded candidate, set by CAS (0: none has room).
fn entry_for(x: u32, t: u32) -> u32 {
  var rea = rea_of(x);
  var e = entry_of(rea, t);
  if (e != 0u) { return e; }
  let best = best_candidate(x, t, 1u, x, 0u);
  if (best == 0u) { return 0u; }
  for (var tries = 0u; tries < 32u; tries++) {
    let c = atomicCompareExchangeWeak(&buckets[16u * x + 15u], rea, with_entry(rea, t, best));
    if (c.exchanged) { return best; }
    rea = c.old_value;
    e = entry_of(rea, t);
    if (e != 0u) { return e; }
  }
  return 0u;
}
// Whether bucket z holds a key of entry (x, t).
fn group_in(z: u32, x: u32, t: u32) -> bool {
  for (var s = 0u; s < 8u; s++) {
    let k = key_at(z, s);
    if (!is_reserved(k) && primary_of(k) == x && tag_of(k) == t) { return true; }
  }
  return false;
}
// The entry's function once more (REPOINT): an entry whose bucket filled up before any key of it
// got in points at another candidate with room instead (one CAS on the remap word). Nothing else
// claims in a full bucket, so a group seen empty stays empty while keys of the entry follow it.
fn repointed(x: u32, t: u32, e: u32) -> u32 {
  let z = secondary_of(x, t, e);
  if (room_of(z) != 0u || group_in(z, x, t)) { return e; }
  let best = best_candidate(x, t, 1u, z, e);
  if (best == 0u) { return e; }
  var rea = rea_of(x);
  for (var tries = 0u; tries < 32u && entry_of(rea, t) == e; tries++) {
    let c = atomicCompareExchangeWeak(&buckets[16u * x + 15u], rea, with_entry(rea, t, best));
    if (c.exchanged) { return best; }
    rea = c.old_value;
  }
  return entry_of(rea, t);
}`,
        /* wgsl */ `
    let x = primary_of(key);
    // A full Type B x only: a free slot in x (a fast-pass claim that gave up early) is left to the
    // rounds, as a copy of the key placed there would not be seen by one following the entry.
    if (is_type_b(x) && ${v.hinted ? 'room_of(x) == 0u' : 'free_slot(x) == NONE'}) {
      let t = tag_of(key);
      var e = entry_for(x, t);
      if (REPOINT && e != 0u) { e = repointed(x, t, e); }
      // Hinted: a claim that finds the entry's bucket full (other keys chose it in the same pass)
      // repoints the entry, while no key of it is there, and tries again.
      for (var attempt = 0u; attempt < ATTEMPTS && e != 0u; attempt++) {
        if (attempt > 0u) {
          let next = repointed(x, t, e);
          if (next == e) { break; }
          e = next;
        }
        let y = secondary_of(x, t, e);
        r = claim_in(y, key, values[i], ASSIGN);
        ${v.hinted ? 'if (r == INSERTED) { take_room(y); }' : ''}
        if (r != RETRY) { break; }
      }
    }`,
      ),
      {
        modules: [
          gridModule,
          hortonFastModule,
          v.hinted ? hintedRoomModule : exactRoomModule,
          talliesModule,
          workgroupAppendModule('queue_out'),
        ],
        constants: { ASSIGN: v.assign, PLAN: false, REPOINT: v.repoint, ATTEMPTS: v.hinted ? HINTED_ATTEMPTS : 1 },
      },
    ),
});

export const bchtSecondKernel = defineKernel({
  name: 'horton.bcht-second',
  workgroupSize: WORKGROUP_SIZE,
  variant: { assign: false },
  params: hortonParams,
  bindings: queueBindings,
  source: (decls, v) =>
    composeWgsl(
      queuePass(
        decls,
        /* wgsl */ `
    let pair = bcht_pair(key);
    let tie = pair.x;
    let other = pair.y;
    let s1 = slot_of(tie, key);
    if (s1 != NONE) {
      if (ASSIGN) { store_value(tie, s1, values[i]); }
      r = EXISTED;
    } else if (other != tie && free_count(other) > 0u) {
      r = claim_in(other, key, values[i], ASSIGN);
    }`,
      ),
      {
        modules: [gridModule, hortonFastModule, exactRoomModule, talliesModule, workgroupAppendModule('queue_out')],
        constants: { ASSIGN: v.assign, PLAN: false },
      },
    ),
});
