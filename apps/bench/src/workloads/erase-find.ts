import { verifyFind } from '../gpu/streams';
import { samplesOf } from '../gpu/time-reps';
import { assertOneChunk, chunkBuffer, encodeInsertFirst } from './chunks';
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
    assertOneChunk(keys, n, 'erase-find');
    const hitKeys = chunkBuffer(keys.hitKeys, 0);
    const outValues = chunkBuffer(keys.outValues, 0);
    const outFound = chunkBuffer(keys.outFound, 0);
    const times = await timeWorkload(ctx, 'bench.erase-find', (encoder, time) => {
      table.encodeReset(encoder);
      encodeInsertFirst(table, encoder, keys, n);
      erase(encoder, hitKeys, half, time('erase'));
      table.encodeFind(encoder, hitKeys, n, outValues, outFound, time('find'));
    });
    const problems = sizeProblems(await table.size(), n - half);
    const verdict = await verifyFind(gpu, { n, foundFrom: half, foundTo: n }, hitKeys, outValues, outFound);
    const findProblems = verdictProblems('find-after-erase', n, verdict);
    return [
      makeRow(ctx, { workload: 'erase-find', load, operation: 'erase', ops: half, samples: samplesOf(times, 'erase'), problems }),
      makeRow(ctx, { workload: 'erase-find', load, operation: 'find', ops: n, samples: samplesOf(times, 'find'), problems: findProblems }),
    ];
  },
};
