import { wgslModule } from '@gpuhash/kernels';

/**
 * `flush_tallies(lid, added, untombed, erased)`: per-invocation tallies go to workgroup memory
 * once, then one global atomic per workgroup onto `counters` (live keys, tombstones): a global
 * atomic per key on one counter word would serialise the whole batch. Called by every invocation
 * (it has a barrier).
 */
export const talliesModule = wgslModule(
  'linear-probe.tallies',
  /* wgsl */ `
var<workgroup> wg_added: atomic<u32>;
var<workgroup> wg_untombed: atomic<u32>;
var<workgroup> wg_erased: atomic<u32>;
fn flush_tallies(lid: u32, added: u32, untombed: u32, erased: u32) {
  if (added != 0u) { atomicAdd(&wg_added, added); }
  if (untombed != 0u) { atomicAdd(&wg_untombed, untombed); }
  if (erased != 0u) { atomicAdd(&wg_erased, erased); }
  workgroupBarrier();
  if (lid == 0u) {
    let a = atomicLoad(&wg_added);
    let u = atomicLoad(&wg_untombed);
    let e = atomicLoad(&wg_erased);
    // counters[0] = live keys, counters[1] = tombstones (both wrap-safe u32 arithmetic)
    if (a != 0u || e != 0u) { atomicAdd(&counters[0], a - e); }
    if (u != 0u || e != 0u) { atomicAdd(&counters[1], e - u); }
  }
}`,
  { needs: ['counters'] },
);
