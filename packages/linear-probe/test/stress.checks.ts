import { fmix32 } from '@gpuhash/kernels';
import { benchKeys as anyBenchKeys, defineChecks, type GpuCheck } from '@gpuhash/testing';
import { LinearProbeTable, Op, RESERVED_KEYS } from '../src';

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
        const hit = await table.find(keys);
        for (let i = 0; i < n; i++) if (hit.found[i] !== 1 || hit.values[i] !== values[i]) throw new Error(`hit ${i} wrong`);
        const miss = await table.find(misses);
        for (let i = 0; i < n; i++) if (miss.found[i] !== 0) throw new Error(`miss ${i} found`);
        const half = keys.subarray(0, n / 2);
        expect((await table.erase(half)) === n / 2, 'erase count');
        const after = await table.find(keys);
        for (let i = 0; i < n; i++) if (after.found[i] !== (i < n / 2 ? 0 : 1)) throw new Error(`after erase ${i} wrong`);
        const again = await table.insert(half, values.subarray(0, n / 2));
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
        // Every value ever stored under each key; keys acknowledged as inserted and not erased since.
        const stored = new Map<number, Set<number>>();
        const mustHave = new Set<number>();
        const base = Math.floor(capacity * 0.85);
        const baseValues = keys.subarray(0, base).map((k) => fmix32(k));
        await table.insert(keys.subarray(0, base), baseValues);
        for (let i = 0; i < base; i++) {
          stored.set(keys[i] as number, new Set([baseValues[i] as number]));
          mustHave.add(keys[i] as number);
        }
        const hot = keys.subarray(0, 64);
        for (let round = 0; round < 12; round++) {
          const n = 4096 * scale;
          const batchKeys = new Uint32Array(n);
          const ops = new Uint8Array(n);
          const values = rng.u32Array(n);
          for (let i = 0; i < n; i++) {
            batchKeys[i] = (rng.below(4) === 0 ? hot[rng.below(hot.length)] : keys[rng.below(keys.length)]) as number;
            // Mostly finds and inserts, some erases: the load stays near 0.9.
            const r = rng.below(10);
            ops[i] = r < 4 ? Op.find : r < 7 ? Op.insertOrAssign : r < 9 ? Op.insert : Op.erase;
          }
          // Keys that must be found in this batch: acknowledged before it and not erased by it.
          const erasedHere = new Set<number>();
          for (let i = 0; i < n; i++) {
            const k = batchKeys[i] as number;
            if (ops[i] === Op.erase) {
              erasedHere.add(k);
              mustHave.delete(k);
            }
            if ((ops[i] as number) <= Op.insertOrAssign) {
              let s = stored.get(k);
              if (!s) stored.set(k, (s = new Set()));
              s.add(values[i] as number);
            }
          }
          const result = await table.apply({ ops, keys: batchKeys, values });
          // Mixed batches claim only empty slots, so erases use them up: a full table reports the
          // inserts it could not place (they are not acknowledged), and a rehash makes room.
          const failed = new Set(result.failed);
          for (const i of failed) expect(result.status[i] === 0, `round ${round}: failed insert ${i} reported status 1`);
          for (let i = 0; i < n; i++) {
            const k = batchKeys[i] as number;
            if (ops[i] !== Op.find) continue;
            if (result.status[i] === 1) {
              expect(
                stored.get(k)?.has(result.values[i] as number) ?? false,
                `round ${round}: find of 0x${k.toString(16)} returned ${result.values[i]}, never stored`,
              );
            } else if (mustHave.has(k)) {
              throw new Error(`round ${round}: key 0x${k.toString(16)} was acknowledged and never erased, but a find missed it`);
            }
          }
          // Inserts of this batch are acknowledged once it is done (unless the batch also erased the key).
          for (let i = 0; i < n; i++) {
            const k = batchKeys[i] as number;
            if ((ops[i] as number) <= Op.insertOrAssign && !erasedHere.has(k) && !failed.has(i)) mustHave.add(k);
          }
          if (round % 4 === 3) await table.rehash();
        }
        const all = await table.retrieveAll();
        const present = new Set(all.keys);
        expect(present.size === all.keys.length, 'a key is stored twice');
        expect(all.keys.length === table.size, `export ${all.keys.length} != size ${table.size}`);
        for (let i = 0; i < all.keys.length; i++) {
          const k = all.keys[i] as number;
          expect(stored.get(k)?.has(all.values[i] as number) ?? false, `0x${k.toString(16)} holds ${all.values[i]}, never stored`);
        }
        for (const k of mustHave) expect(present.has(k), `acknowledged key 0x${k.toString(16)} was lost`);
        table.destroy();
      },
    },
  ];
};

export const stressChecks = defineChecks('linear-probe/stress', [...stressCases(1), ...stressCases(4)]);
