import { verifyFind } from '../gpu/streams';
import { samplesOf } from '../gpu/time-reps';
import { checkFindAnswers } from '../keys';
import { assertOneChunk, chunkBuffer, chunksOf } from './chunks';
import {
  buildTable,
  generate,
  keyCount,
  makeRow,
  timeHost,
  timeWorkload,
  verdictProblems,
  type Workload,
  type WorkloadContext,
} from './context';

const ZIPF_SEED = 0x1b873593;

/** The query keys of a find workload on the device, by chunk: hits, Zipf-drawn hits (into scratch), or misses. */
async function queries(ctx: WorkloadContext, kind: 'hit' | 'miss', n: number): Promise<GPUBuffer[]> {
  if (kind === 'miss') return ctx.keys.missKeys;
  if (ctx.zipf === null) return ctx.keys.hitKeys;
  assertOneChunk(ctx.keys, n, 'find-hit with --zipf');
  await generate(ctx, { n, start: 0, zipf: { s: ctx.zipf, range: n, seed: ZIPF_SEED } }, ctx.keys.scratch);
  return [ctx.keys.scratch];
}

/**
 * Finds against a table built (untimed) to the load factor: `find-hit` looks up every inserted key
 * (or as many Zipf-drawn ones with --zipf), `find-miss` as many keys that were never inserted.
 */
function findWorkload(kind: 'hit' | 'miss'): Workload {
  const name = `find-${kind}`;
  return {
    name,
    group: 'find',
    description: kind === 'hit' ? 'look up keys that are present' : 'look up keys that are absent',
    requires: ['insert', 'find'],
    perLoad: true,
    async run(ctx, load) {
      const n = keyCount(ctx, load);
      const { table, keys, gpu } = ctx;
      await buildTable(ctx, n);
      const q = await queries(ctx, kind, n);
      const chunks = chunksOf(keys, n);
      const times = await timeWorkload(ctx, `bench.${name}`, (encoder, time) => {
        for (const c of chunks) {
          const [values, found] = [chunkBuffer(keys.outValues, c.index), chunkBuffer(keys.outFound, c.index)];
          table.encodeFind(encoder, chunkBuffer(q, c.index), c.count, values, found, time('find'));
        }
      });
      const verdict = { wrong: 0, firstWrong: -1 };
      for (const c of chunks) {
        // Expected answers name stream indices, so every chunk checks against the whole range.
        const expectation = { n: c.count, foundFrom: 0, foundTo: kind === 'hit' ? n : 0 };
        const [values, found] = [chunkBuffer(keys.outValues, c.index), chunkBuffer(keys.outFound, c.index)];
        const v = await verifyFind(gpu, expectation, chunkBuffer(q, c.index), values, found);
        if (v.wrong > 0 && verdict.wrong === 0) verdict.firstWrong = c.first + v.firstWrong;
        verdict.wrong += v.wrong;
      }
      const problems = verdictProblems('find', n, verdict);
      const note = kind === 'hit' && ctx.zipf !== null ? `Zipf(${ctx.zipf}) queries` : undefined;
      return [makeRow(ctx, { workload: name, load, operation: 'find', ops: n, samples: samplesOf(times, 'find'), problems, note })];
    },
    // Host keys in, upload, find, values and flags back; answers checked on the host.
    async endToEnd(ctx, load) {
      const host = ctx.table.host;
      if (!host) throw new Error(`${ctx.entry.name} has no host API`);
      const n = keyCount(ctx, load);
      await buildTable(ctx, n);
      const all = await ctx.hostKeys();
      let hostQueries = (kind === 'hit' ? all.keys : all.misses).subarray(0, n);
      if (kind === 'hit' && ctx.zipf !== null)
        hostQueries = new Uint32Array(await ctx.gpu.readBytes(chunkBuffer(await queries(ctx, kind, n), 0), 0, 4 * n));
      let answers: { values: Uint32Array; found: Uint8Array } | undefined;
      // Answer arrays allocated (and written) once: a fresh array per call pays page faults that cost
      // as much as the transfer, and the find API takes arrays to fill.
      const out = { values: new Uint32Array(n).fill(1), found: new Uint8Array(n).fill(1) };
      const stats = await timeHost(ctx, async () => {
        answers = await host.find(hostQueries, out);
      });
      const verdict = answers ? checkFindAnswers(hostQueries, answers, n) : { wrong: n, firstWrong: 0 };
      // Keys up; a u32 value and a one-byte found flag back per key.
      return { stats, problems: verdictProblems('find', n, verdict), bytes: { up: 4 * n, down: 5 * n } };
    },
  };
}

export const findHit = findWorkload('hit');
export const findMiss = findWorkload('miss');
