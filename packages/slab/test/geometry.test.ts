import { createRng } from '@gpuhash/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bucketsFor, entriesPerSlab, expectedPoolSlabs, poolGeometryFor } from '../src';

/** Pool slabs `keys` keys need in `buckets` buckets when thrown at random: a simulation. */
function simulatedPoolSlabs(keys: number, buckets: number, perSlab: number, seed: number): number {
  const rng = createRng(seed);
  const counts = new Uint32Array(buckets);
  for (let i = 0; i < keys; i++) {
    const b = rng.below(buckets);
    counts[b] = (counts[b] as number) + 1;
  }
  let slabs = 0;
  for (const c of counts) slabs += Math.max(0, Math.ceil(c / perSlab) - 1);
  return slabs;
}

describe('slab geometry (CPU)', () => {
  it('expectedPoolSlabs agrees with throwing keys into buckets at random', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 4000 }),
        fc.integer({ min: 1, max: 120 }),
        fc.boolean(),
        fc.nat(),
        (buckets, perBucket, set, seed) => {
          const keys = buckets * perBucket;
          const m = entriesPerSlab(set ? 'set' : 'map');
          const expected = expectedPoolSlabs(keys, buckets, m);
          const simulated = simulatedPoolSlabs(keys, buckets, m, seed);
          // A sum of `buckets` independent counts: within a few standard deviations (each at most ~1 slab).
          expect(Math.abs(simulated - expected)).toBeLessThanOrEqual(6 * Math.sqrt(buckets) + 2);
        },
      ),
      { numRuns: 25, seed: 0x51ab },
    );
  });

  it('bucketsFor picks B so that a full table averages the target chain length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1 << 28 }), fc.double({ min: 0.1, max: 8, noNaN: true }), (keys, beta) => {
        const b = bucketsFor(keys, 'map', beta);
        expect(b).toBeGreaterThanOrEqual(1);
        expect(keys / (15 * b)).toBeLessThanOrEqual(beta + 1e-9);
        if (b > 1) expect(keys / (15 * (b - 1))).toBeGreaterThan(beta - 1e-9);
      }),
      { numRuns: 200, seed: 0x51ab },
    );
  });

  it('poolGeometryFor covers the slabs asked for with power-of-two blocks, the paper’s 1024-slab blocks for large pools', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1 << 26 }), (slabs) => {
        const g = poolGeometryFor(slabs);
        const span = g.superBlocks * g.blocksPerSuper * 32 * g.blockWords;
        expect(g.units).toBeGreaterThanOrEqual(slabs);
        expect(g.units).toBeLessThanOrEqual(span);
        expect(Number.isInteger(Math.log2(g.blockWords)) && Number.isInteger(Math.log2(g.blocksPerSuper))).toBe(true);
        if (slabs >= 256 * 1024) expect(g.blockWords === 32 && g.blocksPerSuper === 256).toBe(true);
      }),
      { numRuns: 300, seed: 0x51ab },
    );
  });
});
