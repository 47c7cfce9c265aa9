import { fmix32 } from '@gpuhash/kernels';
import { benchKeys as anyBenchKeys, defineChecks, expectBulkRoundTrip, type GpuCheck, mixedBatch, StressModel } from '@gpuhash/testing';
import { LinearProbeTable, RESERVED_KEYS } from '../src';

function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

const benchKeys = (n: number, offset = 1) => anyBenchKeys(n, RESERVED_KEYS, offset);

/**
 * The checks, for a table in one storage binding (windows 1) or with its slots split over
 * `windows` bindings, as tables of 2^28 slots and more are on a GPU (every access then goes
 * through the window accessors).
 */
const stressCases = (windows: number): GpuCheck[] => {
  const suffix = windows === 1 ? '' : ` (slots in ${windows} bindings)`;
  return [
    {
      name: `bulk: 2^16*scale keys inserted, found, missed, half erased, re-found, exactly${suffix}`,
      async run({ gpu, scale }) {
        const n = 65_536 * scale;
        const table = await LinearProbeTable.create(gpu, { capacity: 2 * n, growth: false, maxLoadFactor: 1, windows });
        const keys = benchKeys(n);
        const misses = benchKeys(n, 2);
        const values = keys.map((k) => fmix32(k ^ 0x1234));
        const r = await table.insert(keys, values);
        expect(r.inserted === n && r.failed.length === 0, `inserted ${r.inserted}, failed ${r.failed.length}`);
        const again = await expectBulkRoundTrip(table, keys, values, misses);
        expect(again.inserted === n / 2 && table.tombstones === 0, `re-insert: ${again.inserted}, tombstones ${table.tombstones}`);
        table.destroy();
      },
    },
    {
      name: `stress: mixed batches at load 0.9 with hot conflicting keys lose nothing and invent nothing${suffix}`,
      async run({ gpu, rng, scale }) {
        const capacity = 16_384 * scale;
        const table = await LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, windows });
        const keys = benchKeys(Math.floor(capacity * 0.95));
        const model = new StressModel();
        const base = Math.floor(capacity * 0.85);
        const baseValues = keys.subarray(0, base).map((k) => fmix32(k));
        model.inserted(keys.subarray(0, base), baseValues, (await table.insert(keys.subarray(0, base), baseValues)).failed);
        const hot = keys.subarray(0, 64);
        for (let round = 0; round < 12; round++) {
          // Mostly finds and inserts, some erases: the load stays near 0.9.
          const batch = mixedBatch(rng, 4096 * scale, keys, hot, [4, 3, 2, 1]);
          // Mixed batches claim only empty slots, so erases use them up: a full table reports the
          // inserts it could not place (they are not acknowledged), and a rehash makes room.
          model.applied(`round ${round}`, batch.ops, batch.keys, batch.values, await table.apply(batch));
          if (round % 4 === 3) await table.rehash();
        }
        const all = await table.retrieveAll();
        const pairs = new Map<number, number>();
        all.keys.forEach((k, i) => {
          pairs.set(k, all.values[i] as number);
        });
        expect(pairs.size === all.keys.length, 'a key is stored twice');
        expect(all.keys.length === table.size, `export ${all.keys.length} != size ${table.size}`);
        model.contents('after the rounds', pairs);
        expect(model.checkedFinds > 0 && model.mustFinds > 0, 'the stress made no finds');
        table.destroy();
      },
    },
  ];
};

export const stressChecks = defineChecks('linear-probe/stress', [...stressCases(1), ...stressCases(4)]);
