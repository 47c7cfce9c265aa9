import { samplesOf } from '../gpu/time-reps';
import { assertOneChunk, chunkBuffer, encodeInsertFirst } from './chunks';
import { makeRow, sizeProblems, timeWorkload, type Workload } from './context';

/** Width of the load bins the per-batch times are summed into. */
export const LOAD_BIN = 0.05;

/**
 * Incremental batches (seed 001's table): batches of 2^batchLog2 new keys go into one table, one
 * timed pass each, until the highest load factor of the run. Results are binned by the load a
 * batch started at: insert throughput versus load.
 */
export const incremental: Workload = {
  name: 'incremental',
  description: 'insert batches of 2^b keys one after another up to the highest load',
  requires: ['insert'],
  perLoad: false,
  async run(ctx) {
    const { table, keys, gpu, capacity } = ctx;
    const size = 2 ** ctx.batchLog2;
    const target = Math.max(...ctx.loads);
    const batches = Math.floor((target * capacity) / size);
    if (batches === 0) throw new Error(`a batch of ${size} keys exceeds load ${target} of ${capacity} slots`);
    assertOneChunk(keys, size, 'an incremental batch');
    // Tables take whole buffers, so each batch is copied into its own scratch pair first (a copy,
    // not a host gap: the GPU stays busy).
    const batchKeys = gpu.createBuffer(4 * size, 'bench.incremental.keys');
    const batchValues = gpu.createBuffer(4 * size, 'bench.incremental.values');
    try {
      const times = await timeWorkload(ctx, 'bench.incremental', (encoder, time) => {
        table.encodeReset(encoder);
        for (let b = 0; b < batches; b++) {
          // Batches are powers of two no larger than a chunk (also one): none straddles two.
          const k = Math.floor((b * size) / keys.chunk);
          const at = 4 * (b * size - k * keys.chunk);
          encoder.copyBufferToBuffer(chunkBuffer(keys.hitKeys, k), at, batchKeys, 0, 4 * size);
          encoder.copyBufferToBuffer(chunkBuffer(keys.hitValues, k), at, batchValues, 0, 4 * size);
          table.encodeInsert(encoder, batchKeys, batchValues, size, time(`batch ${b}`));
        }
      });
      const problems = sizeProblems(await table.size(), batches * size);
      const bins = new Map<number, number[]>();
      for (let b = 0; b < batches; b++) {
        const bin = Math.floor((b * size) / capacity / LOAD_BIN + 1e-9);
        const list = bins.get(bin) ?? [];
        list.push(b);
        bins.set(bin, list);
      }
      return [...bins].map(([bin, list]) => {
        // Per rep: the bin's batch times summed, so the spread is that of whole bins.
        const perRep = new Array<number>(ctx.reps).fill(0);
        for (const b of list) {
          samplesOf(times, `batch ${b}`).forEach((ms, r) => {
            perRep[r] = (perRep[r] ?? 0) + ms;
          });
        }
        const load = round(bin * LOAD_BIN);
        return makeRow(ctx, {
          workload: 'incremental',
          load,
          loadTo: round(Math.min((bin + 1) * LOAD_BIN, target)),
          operation: 'insert',
          ops: list.length * size,
          samples: perRep,
          problems,
          note: `${list.length} batches of ${size}`,
        });
      });
    } finally {
      batchKeys.destroy();
      batchValues.destroy();
    }
  },
};

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/**
 * The incremental workload for a static table (SlabHash's Fig. 6, where CUDPP's cuckoo table is
 * rebuilt from scratch for each batch): after each batch of 2^b new keys, the table is rebuilt
 * with every key so far, one timed pass each. Compare with `incremental` on a dynamic table.
 */
export const incrementalRebuild: Workload = {
  name: 'incremental-rebuild',
  description: 'rebuild from scratch with every key so far after each batch of 2^b keys',
  requires: ['insert'],
  perLoad: false,
  // Quadratic in the batch count: run it at the paper's sizes (--capacity-log2 21, --batch-log2 15..17).
  optIn: true,
  async run(ctx) {
    const { table, keys, capacity } = ctx;
    const size = 2 ** ctx.batchLog2;
    const target = Math.max(...ctx.loads);
    const batches = Math.floor((target * capacity) / size);
    if (batches === 0) throw new Error(`a batch of ${size} keys exceeds load ${target} of ${capacity} slots`);
    const times = await timeWorkload(ctx, 'bench.incremental-rebuild', (encoder, time) => {
      for (let b = 0; b < batches; b++) {
        table.encodeReset(encoder);
        encodeInsertFirst(table, encoder, keys, (b + 1) * size, () => time(`batch ${b}`));
      }
    });
    const problems = sizeProblems(await table.size(), batches * size);
    const perRep = new Array<number>(ctx.reps).fill(0);
    for (let b = 0; b < batches; b++) {
      samplesOf(times, `batch ${b}`).forEach((ms, r) => {
        perRep[r] = (perRep[r] ?? 0) + ms;
      });
    }
    return [
      makeRow(ctx, {
        workload: 'incremental-rebuild',
        load: 0,
        loadTo: round(target),
        operation: 'insert',
        ops: batches * size,
        samples: perRep,
        problems,
        note: `${batches} batches of ${size}; each rebuilds the table (ops counts each key once)`,
      }),
    ];
  },
};
