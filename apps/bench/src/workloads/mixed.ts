import { batchSize, encodeGenerateMixed, type MixedBatch, verifyMixed } from '../gpu/mixed';
import { samplesOf } from '../gpu/time-reps';
import { encodeInsertFirst } from './chunks';
import { keyCount, makeRow, sizeProblems, timeWorkload, verdictProblems, type Workload } from './context';

/** Shares of one mixed batch: new inserts, erases of present keys, finds of present and absent keys. */
export interface Mix {
  insert: number;
  erase: number;
  findHit: number;
  findMiss: number;
}

/** Batch size of the mixed workloads: 1/32 of the slots, so the inserts add at most 0.03 load. */
export const MIXED_BATCH_DIVISOR = 32;

/** Op counts of a batch of `size` ops (rounded shares; misses take the rest). */
export function mixCounts(mix: Mix, size: number): { inserts: number; erases: number; hits: number; misses: number } {
  const inserts = Math.round(mix.insert * size);
  const erases = Math.round(mix.erase * size);
  const hits = Math.min(Math.round(mix.findHit * size), size - inserts - erases);
  return { inserts, erases, hits, misses: size - inserts - erases - hits };
}

/**
 * A mixed batch in one dispatch against a table built (untimed, every rep) to the load factor.
 * Keys of the different ops are disjoint, so every answer is known: inserts add new keys, erases
 * remove present keys, finds look up present keys that no op of the batch erases, or absent keys.
 */
function mixedWorkload(name: string, description: string, mix: Mix): Workload {
  return {
    name,
    group: 'mixed',
    description,
    requires: ['insert', 'mixed'],
    perLoad: true,
    async run(ctx, load) {
      const n0 = keyCount(ctx, load);
      const size = Math.max(1, Math.floor(ctx.capacity / MIXED_BATCH_DIVISOR));
      const counts = mixCounts(mix, size);
      if (counts.erases + counts.hits > n0)
        throw new Error(`a batch of ${size} needs ${counts.erases + counts.hits} present keys; the table holds ${n0}`);
      const batch: MixedBatch = {
        ...counts,
        insertStart: n0,
        eraseStart: 0,
        hitStart: counts.erases,
        missStart: 0,
        seed: 0x2f6b1c4d,
      };
      const { table, keys, gpu } = ctx;
      const mixed = table.encodeMixed?.bind(table);
      if (!mixed) throw new Error(`${ctx.entry.name} has no encodeMixed`);
      const n = batchSize(batch);
      const ops = gpu.createBuffer(4 * n, 'bench.mixed.ops');
      const batchKeys = gpu.createBuffer(4 * n, 'bench.mixed.keys');
      const values = gpu.createBuffer(4 * n, 'bench.mixed.values');
      const out = gpu.createBuffer(8 * n, 'bench.mixed.out');
      try {
        const init = gpu.device.createCommandEncoder({ label: 'bench.mixed.generate' });
        encodeGenerateMixed(gpu, init, batch, ops, batchKeys, values);
        gpu.submit([init.finish()]);
        const times = await timeWorkload(ctx, `bench.${name}`, (encoder, time) => {
          table.encodeReset(encoder);
          encodeInsertFirst(table, encoder, keys, n0);
          mixed(encoder, ops, batchKeys, values, n, out, time('mixed'));
        });
        const problems = [
          ...sizeProblems(await table.size(), n0 + counts.inserts - counts.erases),
          ...verdictProblems('mixed', n, await verifyMixed(gpu, n, ops, batchKeys, out)),
        ];
        const note = `batch ${n}: ${counts.inserts} insert, ${counts.erases} erase, ${counts.hits} find-hit, ${counts.misses} find-miss`;
        return [makeRow(ctx, { workload: name, load, operation: 'mixed', ops: n, samples: samplesOf(times, 'mixed'), problems, note })];
      } finally {
        for (const b of [ops, batchKeys, values, out]) b.destroy();
      }
    },
  };
}

/** Hive's mixed workload: insert:find:erase = 0.5:0.3:0.2. */
export const mixedHive = mixedWorkload('mixed-hive', 'Hive: 50% insert, 30% find, 20% erase', {
  insert: 0.5,
  erase: 0.2,
  findHit: 0.3,
  findMiss: 0,
});
/** SlabHash's Γ0 = (0.5, 0.5, 0, 0): all updates. */
export const mixedSlabU100 = mixedWorkload('mixed-slab-u100', 'SlabHash Γ0: 50% insert, 50% erase', {
  insert: 0.5,
  erase: 0.5,
  findHit: 0,
  findMiss: 0,
});
/** SlabHash's Γ1 = (0.2, 0.2, 0.3, 0.3): 40% updates. */
export const mixedSlabU40 = mixedWorkload('mixed-slab-u40', 'SlabHash Γ1: 20% insert, 20% erase, 30% find-hit, 30% find-miss', {
  insert: 0.2,
  erase: 0.2,
  findHit: 0.3,
  findMiss: 0.3,
});
/** SlabHash's Γ2 = (0.1, 0.1, 0.4, 0.4): 20% updates. */
export const mixedSlabU20 = mixedWorkload('mixed-slab-u20', 'SlabHash Γ2: 10% insert, 10% erase, 40% find-hit, 40% find-miss', {
  insert: 0.1,
  erase: 0.1,
  findHit: 0.4,
  findMiss: 0.4,
});
