import { verifyFind } from '../gpu/streams';
import { samplesOf } from '../gpu/time-reps';
import { keyCount, makeRow, sizeProblems, timeWorkload, verdictProblems, type Workload } from './context';

/**
 * Erase then find: a table built to the load factor (untimed, every rep) loses its first half of
 * keys, then every key is looked up: the erased half must miss (walking past tombstones), the
 * other half must hit.
 */
export const eraseFind: Workload = {
  name: 'erase-find',
  description: 'erase half of the keys, then find all of them',
  requires: ['insert', 'erase', 'find'],
  perLoad: true,
  async run(ctx, load) {
    const n = keyCount(ctx, load);
    const half = Math.floor(n / 2);
    const { table, keys, gpu } = ctx;
    const erase = table.encodeErase?.bind(table);
    if (!erase) throw new Error(`${ctx.entry.name} has no encodeErase`);
    const times = await timeWorkload(ctx, 'bench.erase-find', (encoder, time) => {
      table.encodeReset(encoder);
      table.encodeInsert(encoder, keys.hitKeys, keys.hitValues, n);
      erase(encoder, keys.hitKeys, half, time('erase'));
      table.encodeFind(encoder, keys.hitKeys, n, keys.outValues, keys.outFound, time('find'));
    });
    const problems = sizeProblems(await table.size(), n - half);
    const verdict = await verifyFind(gpu, { n, foundFrom: half, foundTo: n }, keys.hitKeys, keys.outValues, keys.outFound);
    const findProblems = verdictProblems('find-after-erase', n, verdict);
    return [
      makeRow(ctx, { workload: 'erase-find', load, operation: 'erase', ops: half, samples: samplesOf(times, 'erase'), problems }),
      makeRow(ctx, { workload: 'erase-find', load, operation: 'find', ops: n, samples: samplesOf(times, 'find'), problems: findProblems }),
    ];
  },
};
