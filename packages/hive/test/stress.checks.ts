import { fmix32 } from '@gpuhash/kernels';
import { benchKeys as anyBenchKeys, defineChecks, expectBulkRoundTrip, mixedBatch, StressModel } from '@gpuhash/testing';
import { RESERVED_KEYS } from '../src';
import { checkLayout } from './invariants';
import { createTable, expect, perVariant } from './table.checks';

const benchKeys = (n: number, offset = 1) => anyBenchKeys(n, RESERVED_KEYS, offset);

/**
 * Checks for a real GPU (run them with tools/gpu-check at a large `scale`); at scale 1 they run in
 * CI on SwiftShader. Load 0.95 throughout: the table never grows, so buckets fill, the locked pass
 * evicts and the stash takes overflow while finds, erases and inserts of the same keys race.
 */
export const stressChecks = defineChecks('hive/stress', [
  ...perVariant(
    'bulk: 2^14*scale keys at load 0.95 inserted, found, missed, half erased, re-inserted, exactly',
    async ({ gpu, scale }, v) => {
      const n = 16_384 * scale;
      const table = await createTable(gpu, v, { capacity: Math.ceil(n / 0.95), growth: false });
      const keys = benchKeys(n);
      const misses = benchKeys(n, 2);
      const values = keys.map((k) => fmix32(k ^ 0x1234));
      // The device-side path, as the benchmark drives it: one encoder, one batch.
      const dk = gpu.upload(keys);
      const dv = gpu.upload(values);
      table.reserveBatch(n);
      const encoder = gpu.device.createCommandEncoder();
      table.encodeInsert(encoder, dk.buffer, dv.buffer, n);
      gpu.submit([encoder.finish()]);
      await table.sync();
      const stats = await table.stats();
      expect(table.size === n, `size ${table.size} after inserting ${n} keys at load 0.95: ${JSON.stringify(stats)}`);
      // Claims take slots at home first: a sequential CPU model of the policy leaves 78% of the
      // keys there at this load (homes of 4 slots), SwiftShader 71-74% (batches race for the same
      // homes); claims blind to homes would leave 1 in 8.
      const built = await checkLayout(table, 'bulk insert');
      expect(built.atHome >= 0.68 * n, `${built.atHome} of ${n} keys at home`);
      const again = await expectBulkRoundTrip(table, keys, values, misses);
      expect(again.inserted === n / 2 && again.failed.length === 0, `re-insert: ${again.inserted}, failed ${again.failed.length}`);
      const layout = await checkLayout(table, 'bulk');
      expect(layout.pairs.size === n, `layout holds ${layout.pairs.size} keys`);
      for (const a of [dk, dv]) a.destroy();
      table.destroy();
    },

    true,
  ),
  ...perVariant(
    'stress: mixed batches at load 0.95 with hot conflicting keys: no wrong value, no lost key, no duplicate',
    async ({ gpu, rng, scale }, v) => {
      const capacity = 16_384 * scale;
      const table = await createTable(gpu, v, { capacity, growth: false });
      const universe = benchKeys(capacity);
      const target = Math.floor(capacity * 0.95);
      const model = new StressModel();
      const refill = async () => {
        const missing: number[] = [];
        for (let i = 0; i < universe.length && model.present.size + missing.length < target; i++) {
          const k = universe[i] as number;
          if (!model.present.has(k)) missing.push(k);
        }
        const keys = Uint32Array.from(missing);
        const values = rng.u32Array(keys.length);
        model.inserted(keys, values, (await table.insert(keys, values)).failed);
      };
      await refill();
      const hot = universe.subarray(0, 64);
      for (let round = 0; round < 6; round++) {
        const batch = mixedBatch(rng, 4096 * scale, universe, hot, [8, 5, 4, 3]);
        model.applied(`round ${round}`, batch.ops, batch.keys, batch.values, await table.apply(batch));
        const layout = await checkLayout(table, `round ${round}`);
        expect(layout.pairs.size === table.size, `round ${round}: ${layout.pairs.size} keys stored, size ${table.size}`);
        model.contents(`round ${round}`, layout.pairs);
        await refill();
      }
      const stats = await table.stats();
      expect(model.checkedFinds > 0 && model.mustFinds > 0, 'the stress made no finds');
      expect(
        stats.loadFactor > 0.9 && stats.lockedInserts > 0,
        `the stress did not reach the locked path at load 0.95: ${JSON.stringify(stats)}`,
      );
      table.destroy();
    },
  ),
]);
