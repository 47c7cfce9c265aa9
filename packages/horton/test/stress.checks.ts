import { check, defineChecks } from '@gpuhash/testing';
import { HortonTable, RESERVED_KEYS } from '../src';
import { checkLayout } from './invariants';
import { VARIANTS } from './table.checks';

/**
 * The device-side path under load, for a real GPU (tools/gpu-check at a large `scale`; scale 1 in
 * CI on SwiftShader): rounds of insert (and insertOrAssign), find, erase and find batches encoded
 * back to back into one command buffer, every answer checked against the model.
 */
export const stressChecks = defineChecks(
  'horton/stress',
  VARIANTS.map((v) => ({
    name: `${v.name}: interleaved insert, erase and find batches on the device at load up to 0.85: no wrong or lost answer`,
    async run({ gpu, rng, scale }) {
      const capacity = 16_384 * scale;
      const table = await HortonTable.create(gpu, {
        capacity,
        growth: false,
        mode: v.mode,
        repatriate: v.repatriate,
        bulkInsert: v.bulkInsert,
      });
      const pool = rng.distinctU32(2 * capacity, RESERVED_KEYS);
      const model = new Map<number, number>();
      let next = 0;
      let answers = 0;
      const rounds = 8;
      try {
        for (let r = 0; r < rounds; r++) {
          // Inserts: fresh keys up to load 0.85, present keys again (some with new values), duplicates.
          const room = Math.max(0, Math.floor(0.85 * table.capacity) - model.size);
          const fresh = pool.slice(next, next + Math.min(room, Math.floor(capacity / 6)));
          next += fresh.length;
          const present = [...model.keys()];
          const again = Array.from(
            { length: Math.floor(fresh.length / 4) },
            () => present[rng.below(Math.max(1, present.length))] ?? (fresh[0] as number),
          );
          const insertKeys = Uint32Array.from([...fresh, ...again, ...fresh.slice(0, fresh.length >> 3)]);
          const insertValues = insertKeys.map((k) => (k ^ r) >>> 0);
          const assign = r % 2 === 1;
          // Erases: present keys, fresh ones of this round, and absent keys.
          const eraseKeys = Uint32Array.from([
            ...present.filter(() => rng.below(3) === 0),
            ...fresh.filter(() => rng.below(8) === 0),
            ...pool.slice(pool.length - 64 * scale),
          ]);
          const probe = Uint32Array.from([...pool.slice(0, next), ...pool.slice(pool.length - 64 * scale)]);
          const dk = gpu.upload(insertKeys);
          const dv = gpu.upload(insertValues);
          const de = gpu.upload(eraseKeys);
          const dp = gpu.upload(probe);
          const out = [0, 1, 2, 3].map(() => gpu.createArray('u32', probe.length));
          table.reserveBatch(Math.max(insertKeys.length, eraseKeys.length));
          const encoder = gpu.device.createCommandEncoder();
          table.encodeInsert(encoder, dk.buffer, dv.buffer, insertKeys.length, { assign });
          table.encodeFind(encoder, dp.buffer, probe.length, (out[0] as typeof dp).buffer, (out[1] as typeof dp).buffer);
          table.encodeErase(encoder, de.buffer, eraseKeys.length);
          table.encodeFind(encoder, dp.buffer, probe.length, (out[2] as typeof dp).buffer, (out[3] as typeof dp).buffer);
          gpu.submit([encoder.finish()]);
          const [v1, f1, v2, f2] = await Promise.all(out.map((a) => gpu.download(a)));
          // The model: inserts (a present key keeps its value unless assign; duplicates in a batch carry one value).
          for (let i = 0; i < insertKeys.length; i++) {
            const k = insertKeys[i] as number;
            if (!model.has(k) || assign) model.set(k, insertValues[i] as number);
          }
          const check1 = (values: Uint32Array, found: Uint32Array, what: string) => {
            for (let i = 0; i < probe.length; i++) {
              const k = probe[i] as number;
              const want = model.get(k);
              if (want === undefined) check(found[i] === 0, `round ${r}, ${what}: absent key ${k} found`);
              else {
                check(found[i] === 1, `round ${r}, ${what}: key ${k} lost`);
                check(values[i] === want, `round ${r}, ${what}: key ${k} holds ${values[i]}, expected ${want}`);
              }
              answers++;
            }
          };
          check1(v1 as Uint32Array, f1 as Uint32Array, 'find after insert');
          for (const k of eraseKeys) model.delete(k);
          check1(v2 as Uint32Array, f2 as Uint32Array, 'find after erase');
          const s = await table.sync();
          check(s.size === model.size, `round ${r}: size ${s.size}, model ${model.size}`);
          for (const a of [dk, dv, de, dp, ...out]) a.destroy();
        }
        const layout = await checkLayout(table, 'after the stress rounds');
        check(layout.pairs.size === model.size, `layout holds ${layout.pairs.size}, model ${model.size}`);
        console.log(`horton/stress ${v.name}: ${rounds} rounds, ${answers} answers checked, 0 wrong or lost`);
      } finally {
        table.destroy();
      }
    },
  })),
);
