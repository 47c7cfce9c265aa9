import { testGpu } from '@gpuhash/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSlabEngine } from '../src/base';

const NO_FAILURES = { count: 0, failed: new Uint32Array(0), reserved: new Uint32Array(0), contended: new Uint32Array(0), truncated: false };

/**
 * What follows a batch whose inserts found the pool exhausted: the documented rule (README,
 * "Growth") as a reference. A batch that leaves the pool no fuller than maxLoadFactor reruns first,
 * up to four times, with the pool as it is; otherwise the pool grows (growth on) or they are reported.
 */
function expected(
  slabsInUse: number,
  poolSlabs: number,
  attempt: number,
  growth: boolean,
  maxLoadFactor: number,
): 'rerun' | 'grow' | 'report' {
  if (attempt < 4 && slabsInUse <= maxLoadFactor * poolSlabs) return 'rerun';
  return growth ? 'grow' : 'report';
}

describe('slab: inserts that found the pool exhausted', () => {
  it('rerun before the pool grows while the batch left it no fuller than maxLoadFactor, else grow or report', async () => {
    const gpu = await testGpu();
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 6 }),
        fc.boolean(),
        fc.constantFrom(0.5, 0.8, 0.9),
        fc.integer({ min: 1, max: 5000 }),
        async (fill, attempt, growth, maxLoadFactor, exhausted) => {
          const engine = await createSlabEngine(gpu, 'exhaustion test', { capacity: 4096, growth, maxLoadFactor }, 'map');
          try {
            const poolSlabs = engine.pool.poolSlabs;
            // As the batch's counters read back: slabs linked, and inserts that found no slab.
            engine.slabsInUse = Math.round(fill * poolSlabs);
            engine.exhausted = exhausted;
            const growths = engine.poolGrowths;
            const decision = await engine.afterInsertFailures({ ...NO_FAILURES, count: 1, failed: new Uint32Array([0]) }, attempt);
            const grew = engine.poolGrowths > growths;
            const want = expected(engine.slabsInUse, poolSlabs, attempt, growth, maxLoadFactor);
            expect({ decision, grew }).toEqual({
              decision: want === 'report' ? 'report' : 'retry',
              grew: want === 'grow',
            });
            if (want === 'rerun') expect(engine.pool.poolSlabs).toBe(poolSlabs);
          } finally {
            engine.scratch.destroy();
            engine.destroy();
          }
        },
      ),
      { numRuns: 40, seed: 0x51ab },
    );
  });
});
