import { benchKeys, check, defineChecks, type GpuCheck, mixedBatch, StressModel } from '@gpuhash/testing';
import { RESERVED_KEYS, SlabHashMap } from '../src';
import { readLayout } from './invariants';

/**
 * Mixed concurrent batches on a real GPU (run with tools/gpu-check at a large `scale`; at scale 1
 * they run in CI on SwiftShader): finds, inserts, insertOrAssigns and erases of the same hot keys
 * race in one dispatch, over long chains (few buckets) while the pool grows. After every batch the
 * slabs are read back: no find returned a value never stored under its key, no acknowledged key
 * was lost, no key is stored twice, and SlabHash's invariants hold (invariants.ts).
 */
function stress(name: string, keysPerBucket: number, tile: number | undefined): GpuCheck {
  return {
    name,
    run: async ({ gpu, rng, scale }) => {
      const variants = gpu.subgroups.supported ? [true, false] : [false];
      for (const subgroups of variants) {
        const universe = benchKeys(8192 * scale, RESERVED_KEYS);
        const buckets = Math.max(1, Math.floor(universe.length / keysPerBucket));
        const table = await SlabHashMap.create(gpu, { capacity: 64, buckets, poolSlabs: 1, subgroups, ...(tile ? { tile } : {}) });
        const model = new StressModel();
        const hot = universe.subarray(0, 32);
        for (let round = 0; round < 8; round++) {
          const batch = mixedBatch(rng, 4096 * scale, universe, hot, [8, 4, 5, 3]);
          const result = await table.apply(batch);
          check(result.failed.length === 0, `round ${round}: ${result.failed.length} ops failed with growth on`);
          model.applied(`round ${round}`, batch.ops, batch.keys, batch.values, result);
          const layout = await readLayout(table, `round ${round}`);
          check(layout.entries.length === table.size, `round ${round}: ${layout.entries.length} keys stored, size ${table.size}`);
          model.contents(`round ${round}`, new Map(layout.entries));
          if (round === 4) await table.flush();
        }
        const stats = await table.stats();
        check(model.checkedFinds > 0, 'the stress made no finds');
        check(
          stats.maxChainLength >= 2 && stats.poolGrowths > 0,
          `the chains stayed short or the pool never grew: ${JSON.stringify(stats)}`,
        );
        table.destroy();
      }
    },
  };
}

export const stressChecks = defineChecks('slab/stress', [
  stress('mixed batches with hot keys over chains of ~4 slabs: no wrong value, no lost key, no duplicate', 60, undefined),
  stress('the same over chains of ~20 slabs, groups of 4 lanes', 300, 4),
]);
