import { workgroupTalliesModule } from '@gpuhash/kernels';
import { commonModule } from './common';

/**
 * What an invocation counts while it works (`count(T_ADDED, 1u)`), flushed once per workgroup
 * onto the counters buffer: a global atomic per key on one word would serialise the batch.
 */
export const talliesModule = workgroupTalliesModule(
  'hive.tallies',
  {
    added: 'atomicAdd(&counters[C_SIZE], v);',
    erased: 'atomicSub(&counters[C_SIZE], v);',
    stashIn: 'atomicAdd(&counters[C_STASH], v); atomicAdd(&counters[C_STASHED_TOTAL], v);',
    stashOut: 'atomicSub(&counters[C_STASH], v);',
    evictions: 'atomicAdd(&counters[C_EVICTIONS], v);',
    lockConflicts: 'atomicAdd(&counters[C_LOCK_CONFLICTS], v);',
    lockAcquisitions: 'atomicAdd(&counters[C_LOCK_ACQUISITIONS], v);',
    deferred: 'atomicAdd(&counters[C_LOCKED_INSERTS], v);',
  },
  { requires: [commonModule], needs: ['counters'] },
);
