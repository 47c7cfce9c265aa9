import { benchKeys, check, defineChecks, type GpuCheck } from '@gpuhash/testing';
import { Op, RESERVED_KEYS, SlabHashMap } from '../src';
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
        const stored = new Map<number, Set<number>>();
        const present = new Set<number>();
        const note = (k: number, v: number) => {
          let s = stored.get(k);
          if (!s) stored.set(k, (s = new Set()));
          s.add(v);
        };
        const hot = universe.subarray(0, 32);
        let checkedFinds = 0;
        for (let round = 0; round < 8; round++) {
          const n = 4096 * scale;
          const keys = new Uint32Array(n);
          const ops = new Uint8Array(n);
          const values = rng.u32Array(n);
          for (let i = 0; i < n; i++) {
            keys[i] = (rng.below(4) === 0 ? hot[rng.below(hot.length)] : universe[rng.below(universe.length)]) as number;
            const r = rng.below(20);
            ops[i] = r < 8 ? Op.find : r < 12 ? Op.insertOrAssign : r < 17 ? Op.insert : Op.erase;
            if ((ops[i] as number) <= Op.insertOrAssign) note(keys[i] as number, values[i] as number);
          }
          const erasedHere = new Set<number>();
          keys.forEach((k, i) => {
            if (ops[i] === Op.erase) erasedHere.add(k);
          });
          const result = await table.apply({ ops, keys, values });
          check(result.failed.length === 0, `round ${round}: ${result.failed.length} ops failed with growth on`);
          for (let i = 0; i < n; i++) {
            const k = keys[i] as number;
            if (ops[i] !== Op.find) continue;
            if (result.status[i] === 1) {
              checkedFinds++;
              check(
                stored.get(k)?.has(result.values[i] as number) ?? false,
                `round ${round}: find of 0x${k.toString(16)} returned ${result.values[i]}, never stored under it`,
              );
            } else if (present.has(k) && !erasedHere.has(k)) {
              throw new Error(`round ${round}: key 0x${k.toString(16)} was present and not erased, but a find missed it`);
            }
          }
          for (const k of erasedHere) present.delete(k);
          for (let i = 0; i < n; i++) {
            const k = keys[i] as number;
            if ((ops[i] as number) <= Op.insertOrAssign && !erasedHere.has(k)) present.add(k);
          }
          const layout = await readLayout(table, `round ${round}`);
          check(layout.entries.length === table.size, `round ${round}: ${layout.entries.length} keys stored, size ${table.size}`);
          const held = new Map(layout.entries);
          for (const [k, v] of layout.entries)
            check(stored.get(k)?.has(v) ?? false, `round ${round}: 0x${k.toString(16)} holds ${v}, never stored under it`);
          for (const k of present) check(held.has(k), `round ${round}: acknowledged key 0x${k.toString(16)} was lost`);
          for (const k of erasedHere) if (held.has(k)) present.add(k);
          if (round === 4) await table.flush();
        }
        const stats = await table.stats();
        check(checkedFinds > 0, 'the stress made no finds');
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
