import { wgslModule } from '@gpuhash/kernels';
import { commonModule } from './common';

/** Tally slots: what an invocation counts while it works, flushed once per workgroup. */
export const Tally = {
  added: 0,
  erased: 1,
  stashIn: 2,
  stashOut: 3,
  evictions: 4,
  lockConflicts: 5,
  lockAcquisitions: 6,
  deferred: 7,
} as const;

/**
 * Per-invocation tallies go to workgroup memory, then one global atomic per counter and
 * workgroup (a global atomic per key on one word would serialise the batch). The lists
 * (deferred, freed, failed) are appended to with one atomicAdd per entry.
 * Needs `params`, `counters: array<atomic<u32>>`, `lists: array<atomic<u32>>`.
 */
export const talliesModule = wgslModule(
  'hive.tallies',
  /* wgsl */ `
${Object.entries(Tally)
  .map(([k, v]) => `const T_${k.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}: u32 = ${v}u;`)
  .join('\n')}
var<private> tally: array<u32, 8>;
var<workgroup> wg_tally: array<atomic<u32>, 8>;

fn count(t: u32, v: u32) { tally[t] += v; }

fn flush_tallies(lid: u32) {
  for (var t = 0u; t < 8u; t++) {
    if (tally[t] != 0u) { atomicAdd(&wg_tally[t], tally[t]); }
  }
  workgroupBarrier();
  if (lid < 8u) {
    let v = atomicLoad(&wg_tally[lid]);
    if (v != 0u) {
      switch lid {
        case 0u: { atomicAdd(&counters[C_SIZE], v); }
        case 1u: { atomicSub(&counters[C_SIZE], v); }
        case 2u: { atomicAdd(&counters[C_STASH], v); atomicAdd(&counters[C_STASHED_TOTAL], v); }
        case 3u: { atomicSub(&counters[C_STASH], v); }
        case 4u: { atomicAdd(&counters[C_EVICTIONS], v); }
        case 5u: { atomicAdd(&counters[C_LOCK_CONFLICTS], v); }
        case 6u: { atomicAdd(&counters[C_LOCK_ACQUISITIONS], v); }
        default: { atomicAdd(&counters[C_LOCKED_INSERTS], v); }
      }
    }
  }
}

fn push_list(list: u32, entry: u32) {
  let at = atomicAdd(&lists[list], 1u);
  if (at < params.list_cap) { atomicStore(&lists[LIST_HEADER + list * params.list_cap + at], entry); }
}
// Every failure is counted; indices are kept while the list has room (it holds a batch).
fn report_failure(index: u32) { push_list(L_FAILED, index); }
// A retired slot (global index), freed by the release pass once no op of this batch can read it.
fn push_freed(g: u32) { push_list(L_FREED, g); }
`,
  { requires: [commonModule], needs: ['params', 'counters', 'lists'] },
);
