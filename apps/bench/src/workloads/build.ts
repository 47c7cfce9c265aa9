import { samplesOf } from '../gpu/time-reps';
import { encodeInsertFirst } from './chunks';
import { keyCount, makeRow, sizeProblems, timeHost, timeWorkload, type Workload } from './context';

/** Bulk build: an empty table takes load x capacity unique keys in one batch. */
export const build: Workload = {
  name: 'build',
  description: 'bulk insert into an empty table up to the load factor',
  requires: ['insert'],
  perLoad: true,
  async run(ctx, load) {
    const n = keyCount(ctx, load);
    const { table, keys } = ctx;
    const times = await timeWorkload(ctx, 'bench.build', (encoder, time) => {
      table.encodeReset(encoder);
      encodeInsertFirst(table, encoder, keys, n, () => time('insert'));
    });
    const problems = sizeProblems(await table.size(), n);
    return [makeRow(ctx, { workload: 'build', load, operation: 'insert', ops: n, samples: samplesOf(times, 'insert'), problems })];
  },
  // Host arrays in, upload, insert, size back; the table is emptied (untimed) before each run.
  async endToEnd(ctx, load) {
    const host = ctx.table.host;
    if (!host) throw new Error(`${ctx.entry.name} has no host API`);
    const n = keyCount(ctx, load);
    const all = await ctx.hostKeys();
    const keys = all.keys.subarray(0, n);
    const values = all.values.subarray(0, n);
    const stats = await timeHost(
      ctx,
      () => host.insert(keys, values),
      () => host.clear(),
    );
    // Keys and values up (u32 each); the answer is a count and the (empty) list of failed indices.
    return { stats, problems: sizeProblems(await ctx.table.size(), n), bytes: { up: 8 * n, down: 0 } };
  },
};
