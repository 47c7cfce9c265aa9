import { samplesOf } from '../gpu/time-reps';
import { makeRow, timeWorkload, type Workload } from './context';

/** Slabs the allocator workload takes: the paper's one million (of a pool of 8 million), or an eighth of a smaller pool. */
export function allocCount(poolSlabs: number): number {
  return Math.max(1, Math.min(1 << 20, Math.floor(poolSlabs / 8)));
}

/**
 * SlabAlloc alone (SlabHash's Table I): 2^20 slab allocations, one per invocation, each served by
 * its cooperative group's resident block, from a pool of 2^23 slabs (the paper's 1 GiB); the slabs
 * are freed, untimed, after each repetition. Reported as allocations per second.
 */
export const alloc: Workload = {
  name: 'alloc',
  description: 'slab allocations, one per invocation (SlabAlloc alone)',
  requires: ['alloc'],
  perLoad: false,
  async run(ctx, load) {
    const { table, gpu } = ctx;
    const encodeAllocate = table.encodeAllocate?.bind(table);
    const encodeFree = table.encodeFree?.bind(table);
    if (!encodeAllocate || !encodeFree) throw new Error(`${ctx.entry.name} has no allocator`);
    const n = allocCount(table.allocatorSlabs ?? 0);
    const out = gpu.createBuffer(4 * n, 'bench.alloc.out');
    try {
      const times = await timeWorkload(ctx, 'bench.alloc', (encoder, time) => {
        encodeAllocate(encoder, n, out, time('alloc'));
        encodeFree(encoder, out, n);
      });
      const got = new Uint32Array(await gpu.readBytes(out, 0, 4 * n));
      const distinct = new Set(got);
      const problems: string[] = [];
      if (got.includes(0xffffffff)) problems.push('the pool ran out');
      if (distinct.size !== n) problems.push(`${n - distinct.size} slabs handed out twice`);
      return [makeRow(ctx, { workload: 'alloc', load, operation: 'alloc', ops: n, samples: samplesOf(times, 'alloc'), problems })];
    } finally {
      out.destroy();
    }
  },
};
