import { cooperativeVariantModule, type WgslModule } from '@gpuhash/kernels';
import { layoutModule } from './layout';
import { scanModule } from './scan';
import { slabAllocModule } from './slab-alloc';
import { talliesModule } from './tallies';

/** Attempts an update makes (re-reads after a lost CAS or a BUSY slot) before it reports contention. */
export const MAX_ATTEMPTS = 4096;

/**
 * The update operations of SlabHash, each run by a whole cooperative group for the key of its
 * source lane `src` (warp-cooperative work sharing: the kernels serve their lanes' queued ops one
 * at a time). Constants of the composed kernel: SET_MODE; UNIQUE (map and set: one copy per key;
 * multimap: duplicates kept); MIXED (inserts publish through BUSY and claim only EMPTY slots,
 * because finds and erases run in the same dispatch); REUSE (inserts also reuse TOMBSTONE slots:
 * unique-key insert batches, where nothing erases).
 *
 * Invariants the protocol keeps (the package README argues each):
 * - in unique modes a slot leaves EMPTY once (to a key, or to BUSY then a key) and never returns
 *   to EMPTY while the table is live; erase turns a key into TOMBSTONE. So every slab but a
 *   chain's last is full of keys and tombstones, and EMPTY slots exist only in the last slab;
 * - an insert claims the first free slot of the chain, in word order, after reading the whole
 *   chain and finding no copy of its key (and, in MIXED batches, no BUSY slot that may become it).
 */
const OPS_CODE = /* wgsl */ `
const INS_ADDED_EMPTY: u32 = 0u;
const INS_PRESENT: u32 = 1u;
const INS_NO_SLAB: u32 = 2u;
const INS_CONTENDED: u32 = 3u;
const INS_ADDED_TOMB: u32 = 4u;
const SL_MAX_ATTEMPTS: u32 = ${MAX_ATTEMPTS}u;

/**
 * Claims the free slot at word index \`word\` for (k, v), by the source lane alone: 0 when another
 * claim came first, 1 when it took an EMPTY slot, 2 a TOMBSTONE. In MIXED batches the key word
 * goes EMPTY -> BUSY -> k around the value's store, so a find that sees k sees its value.
 */
fn sl_claim(word: u32, k: u32, v: u32) -> u32 {
  // In MIXED batches the key word goes EMPTY -> BUSY -> k around the value's store.
  let desired = select(k, BUSY_KEY, MIXED && !SET_MODE);
  // EMPTY first (the common case, one CAS); a TOMBSTONE only where this batch may reuse one.
  var kind = 0u;
  let r = atomicCompareExchangeWeak(&slabs[word], EMPTY_KEY, desired);
  if (r.exchanged) {
    kind = 1u;
  } else if (REUSE && r.old_value == TOMBSTONE_KEY) {
    if (atomicCompareExchangeWeak(&slabs[word], TOMBSTONE_KEY, desired).exchanged) { kind = 2u; }
  }
  if (kind == 0u || SET_MODE) { return kind; }
  atomicStore(&slabs[word + 1u], v);
  // Nothing reads the table in an insert batch, so there the value may follow the key.
  if (MIXED) { atomicStore(&slabs[word], k); }
  return kind;
}

/**
 * INSERT (multimap) and REPLACE (unique modes; with \`assign\`, the value of a present key is
 * overwritten; without, it is kept). The paper's REPLACE CASes the pair against EMPTY even where
 * the slot holds the key, which can never succeed: here a present key is settled by a store to
 * its value word (or nothing), never a CAS.
 */
fn sl_insert(k: u32, home: u32, v: u32, src: u32, assign: bool) -> u32 {
  var start = home;
  for (var attempt = 0u; attempt < SL_MAX_ATTEMPTS; attempt++) {
    var s = start;
    var tail = start;
    var free_s = NONE;
    var free_w = NONE;
    var found_s = NONE;
    var found_w = NONE;
    var busy = false;
    for (var hops = 0u; hops < params.max_hops; hops++) {
      let r = sl_scan(s, k, UNIQUE, false, free_s == NONE, REUSE, MIXED && UNIQUE);
      if (r.key_word != NONE) { found_s = s; found_w = r.key_word; break; }
      busy = busy || r.busy;
      if (free_s == NONE && r.free_word != NONE) {
        free_s = s;
        free_w = r.free_word;
        // Duplicates are allowed: the first free slot will do.
        if (!UNIQUE) { break; }
      }
      tail = s;
      if (r.next == EMPTY_POINTER) { break; }
      s = r.next;
    }
    if (found_s != NONE) {
      if (assign && !SET_MODE && cg_lane() == src) { atomicStore(&slabs[found_s * 32u + found_w + 1u], v); }
      return INS_PRESENT;
    }
    // A BUSY slot may be this key being published: read the chain again.
    if (busy) { continue; }
    if (free_s != NONE) {
      var kind = 0u;
      if (cg_lane() == src) { kind = sl_claim(free_s * 32u + free_w, k, v); }
      kind = cg_broadcast(kind, src);
      if (kind == 1u) { return INS_ADDED_EMPTY; }
      if (kind == 2u) { return INS_ADDED_TOMB; }
      // Another claim took the slot. The slabs before free_s hold neither k nor a free slot (and
      // cannot gain either while this batch runs): go on from free_s.
      start = free_s;
      continue;
    }
    // The chain is full: allocate a slab (the whole group) and link it after the tail.
    let fresh = sa_allocate();
    if (fresh == NONE) {
      // The pool may only look exhausted: groups racing to extend this same chain each hold a
      // slab until one links. If the tail got its next slab meanwhile, go on from the tail.
      var next = EMPTY_POINTER;
      if (cg_lane() == src) { next = atomicLoad(&slabs[tail * 32u + 31u]); }
      if (cg_broadcast(next, src) != EMPTY_POINTER) {
        start = tail;
        continue;
      }
      return INS_NO_SLAB;
    }
    if (cg_lane() == src) {
      let r = atomicCompareExchangeWeak(&slabs[tail * 32u + 31u], EMPTY_POINTER, fresh);
      // Another group linked a slab first (or the weak CAS failed spuriously): give ours back.
      if (!r.exchanged) { sa_free(fresh); }
    }
    start = tail;
  }
  return INS_CONTENDED;
}

`;

const ERASE_CODE = /* wgsl */ `
/**
 * DELETE: the first copy of k in the chain becomes TOMBSTONE (unique modes: a later insert of k
 * must still find any copy further on) or EMPTY (multimap). The CAS is made on the word that holds
 * k, by the source lane (the paper's pseudocode writes the source lane's word instead). Returns
 * 1 when this call erased a copy.
 */
fn sl_erase_one(k: u32, home: u32, src: u32) -> u32 {
  var s = home;
  for (var hops = 0u; hops < params.max_hops; hops++) {
    let r = sl_scan(s, k, true, false, false, false, false);
    if (r.key_word != NONE) {
      var done = 0u;
      if (cg_lane() == src) {
        let mark = select(EMPTY_KEY, TOMBSTONE_KEY, UNIQUE);
        done = select(0u, 1u, atomicCompareExchangeWeak(&slabs[s * 32u + r.key_word], k, mark).exchanged);
      }
      if (cg_broadcast(done, src) == 1u) { return 1u; }
      // A concurrent erase took that copy (or the CAS failed spuriously): read the slab again.
      continue;
    }
    if (r.next == EMPTY_POINTER) { break; }
    s = r.next;
  }
  return 0u;
}

/** DELETEALL (multimap): every copy of k becomes EMPTY, each by the lane that read it. Returns how many. */
fn sl_erase_all(k: u32, home: u32) -> u32 {
  var s = home;
  var erased = 0u;
  let g = TILE;
  for (var hops = 0u; hops < params.max_hops; hops++) {
    var next = EMPTY_POINTER;
    for (var c0 = 0u; c0 < SLAB_CELLS; c0 += g) {
      let c = c0 + cg_lane();
      let cell = sl_cell_keys(s, c);
      var mine = false;
      if (sl_key_a(c) && cell.x == k) { mine = atomicCompareExchangeWeak(&slabs[s * 32u + 2u * c], k, EMPTY_KEY).exchanged; }
      erased += countOneBits(cg_ballot32(mine));
      if (c0 + g >= SLAB_CELLS) { next = cg_broadcast(cell.y, NEXT_CELL - c0); }
    }
    if (next == EMPTY_POINTER) { break; }
    s = next;
  }
  return erased;
}
`;

/** sl_insert over atomic reads, with the allocator (insert and mixed kernels). */
export function insertModule(subgroups: boolean): WgslModule {
  return cooperativeVariantModule('slab.insert', subgroups, OPS_CODE, {
    requires: [layoutModule, scanModule('atomic', subgroups), slabAllocModule(subgroups, talliesModule), talliesModule],
    needs: ['params', 'slabs', 'SET_MODE', 'UNIQUE', 'MIXED', 'REUSE'],
  });
}

/** sl_erase_one and sl_erase_all over atomic reads. */
export function eraseModule(subgroups: boolean): WgslModule {
  return cooperativeVariantModule('slab.erase', subgroups, ERASE_CODE, {
    requires: [layoutModule, scanModule('atomic', subgroups)],
    needs: ['params', 'slabs', 'UNIQUE', 'TILE'],
  });
}
