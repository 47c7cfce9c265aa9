import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, failureListModule, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { bucketModule } from './common';
import { talliesModule } from './insert';
import { hortonParams, WORKGROUP_SIZE } from './params';

const entry = entryPoint(WORKGROUP_SIZE);
const atomicsRW = storage('read_write', 'atomic<u32>');
const words = storage('read', 'u32');

/**
 * Erases, lock-free: a key's slot goes from the key to EMPTY by CAS, so of two erases of one key
 * exactly one succeeds. Horton mode: a Type B primary bucket that lost a key (or one of its
 * remapped keys) is queued once (`locks` stamped with the epoch) in `dirty` for the tidy pass; a
 * remap entry whose last user left is cleared here when the erase sees no other user (a
 * concurrent erase of a co-user may leave it set: the tidy pass clears it exactly).
 */
const HORTON_ERASE = /* wgsl */ `
fn mark_dirty(x: u32) {
  if (atomicMax(&locks[x], params.epoch << params.prio_bits) < (params.epoch << params.prio_bits)) {
    let at = atomicAdd(&dirty[0], 1u);
    atomicStore(&dirty[1u + at], x);
  }
}
fn horton_erase(key: u32) -> bool {
  let x = primary_of(key);
  if (erase_in(x, key)) {
    if (is_type_b(x)) { mark_dirty(x); }
    return true;
  }
  if (!is_type_b(x)) { return false; }
  let t = tag_of(key);
  let e = entry_of(rea_of(x), t);
  if (e == 0u) { return false; }
  let y = secondary_of(x, t, e);
  if (!erase_in(y, key)) { return false; }
  var users = 0u;
  for (var s = 0u; s < 8u; s++) {
    let k = key_at(y, s);
    if (!is_reserved(k) && primary_of(k) == x && tag_of(k) == t) { users++; }
  }
  if (users == 0u) { atomicAnd(&buckets[16u * x + 15u], ~(ENTRY_MASK << (ENTRY_BITS * t))); }
  mark_dirty(x);
  return true;
}
`;

const eraseSource = (decls: string, mode: 'horton' | 'bcht') =>
  composeWgsl(
    /* wgsl */ `
${decls}
// Erases key from bucket b if it is there: 1 erased, 0 absent (or erased by another copy).
fn erase_in(b: u32, key: u32) -> bool {
  for (var s = 0u; s < 8u; s++) {
    if (key_at(b, s) != key) { continue; }
    for (var tries = 0u; tries < 64u; tries++) {
      let c = atomicCompareExchangeWeak(&buckets[16u * b + 2u * s], key, EMPTY);
      if (c.exchanged) { return true; }
      if (c.old_value != key) { return false; }
    }
    return false;
  }
  return false;
}
${mode === 'horton' ? HORTON_ERASE : ''}
fn bcht_erase(key: u32) -> bool {
  let b1 = primary_of(key);
  if (erase_in(b1, key)) { return true; }
  return erase_in(second_of(key), key);
}
${entry} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let key = keys[i];
    if (is_reserved(key)) { report_failure(i | FAILURE_RESERVED); continue; }
    if (${mode === 'bcht' ? 'bcht_erase' : 'horton_erase'}(key)) { count(T_ERASED, 1u); }
  }
  flush_tallies(lid);
}`,
    { modules: [gridModule, bucketModule, talliesModule, failureListModule], constants: { PLAN: false } },
  );

export const eraseKernel = defineKernel({
  name: 'horton.erase',
  workgroupSize: WORKGROUP_SIZE,
  params: hortonParams,
  bindings: {
    params: uniform(),
    buckets: atomicsRW,
    locks: atomicsRW,
    keys: words,
    dirty: atomicsRW,
    counters: atomicsRW,
    failed: atomicsRW,
  },
  source: (decls) => eraseSource(decls, 'horton'),
});

/** The BCHT mode's erase: a key's slot in either bucket goes to EMPTY by CAS. */
export const bchtEraseKernel = defineKernel({
  name: 'horton.erase-bcht',
  workgroupSize: WORKGROUP_SIZE,
  params: hortonParams,
  bindings: { params: uniform(), buckets: atomicsRW, keys: words, counters: atomicsRW, failed: atomicsRW },
  source: (decls) => eraseSource(decls, 'bcht'),
});

/**
 * The tidy pass after a Horton erase batch, one invocation per dirty Type B bucket x (each listed
 * once, so it alone changes x's entries and x's remapped keys): entries no key uses any more are
 * cleared (exact, whatever concurrent erases saw); with `repatriate`, remapped keys move back into
 * x's free slots, and a bucket left with no entry in use becomes Type A again (its last slot free).
 */
export const tidyKernel = defineKernel({
  name: 'horton.tidy',
  workgroupSize: WORKGROUP_SIZE,
  variant: { repatriate: true },
  params: hortonParams,
  bindings: { params: uniform(), buckets: atomicsRW, queue_in: words, counters: atomicsRW },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entry} {
  let n = min(queue_in[0], arrayLength(&queue_in) - 1u);
  ${gridStrideLoop('j', 'n', WORKGROUP_SIZE)} {
    let x = queue_in[1u + j];
    if (!is_type_b(x)) { continue; }
    var rea = rea_of(x);
    for (var t = 0u; t < ENTRIES; t++) {
      let e = entry_of(rea, t);
      if (e == 0u) { continue; }
      let y = secondary_of(x, t, e);
      var users = 0u;
      for (var s = 0u; s < 8u; s++) {
        let k = key_at(y, s);
        if (is_reserved(k) || primary_of(k) != x || tag_of(k) != t) { continue; }
        if (REPATRIATE) {
          let f = free_slot(x);
          if (f != NONE) {
            put(x, f, k, value_at(y, s));
            clear_slot(y, s);
            continue;
          }
        }
        users++;
      }
      if (users == 0u) { rea = with_entry(rea, t, 0u); }
    }
    set_rea(x, rea);
    if (REPATRIATE && rea == 0u) {
      atomicStore(&buckets[16u * x + 14u], EMPTY);
      count(T_TO_A, 1u);
    }
  }
  flush_tallies(lid);
}`,
      { modules: [gridModule, bucketModule, talliesModule], constants: { REPATRIATE: v.repatriate, PLAN: false } },
    ),
});
