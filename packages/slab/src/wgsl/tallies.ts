import { workgroupTalliesModule } from '@gpuhash/kernels';
import { Counter } from './params';

/**
 * What slab kernels count, flushed once per workgroup onto `counters` (see params.ts's Counter):
 * entries added and erased, tombstones made and reused, pool slabs allocated and released, and
 * inserts that found the pool exhausted.
 */
export const talliesModule = workgroupTalliesModule(
  'slab.tallies',
  {
    added: `atomicAdd(&counters[${Counter.size}], v);`,
    erased: `atomicSub(&counters[${Counter.size}], v);`,
    tombed: `atomicAdd(&counters[${Counter.tombstones}], v);`,
    untombed: `atomicSub(&counters[${Counter.tombstones}], v);`,
    allocated: `atomicAdd(&counters[${Counter.slabs}], v);`,
    released: `atomicSub(&counters[${Counter.slabs}], v);`,
    exhausted: `atomicAdd(&counters[${Counter.exhausted}], v);`,
  },
  { needs: ['counters'] },
);
