import type { BenchTable, TimestampWrites } from '../tables/types';
import type { KeyBuffers } from './context';

/**
 * The bench's key streams are cut into buffers of `keys.chunk` keys, each within one storage
 * binding (2^28 keys on the GPU hosts: a table of 2^30 slots at load 0.95 takes 1.02 x 10^9).
 * Tables take whole buffers, so a batch of more keys than a chunk goes in as one call per chunk;
 * the timed passes of one rep are summed (time-reps.ts).
 */
export interface Chunk {
  /** Index of the chunk's buffers in each stream. */
  index: number;
  /** Stream position of its first key. */
  first: number;
  /** Keys of the chunk that are in the range. */
  count: number;
}

/** The chunks that hold stream positions [0, n). */
export function chunksOf(keys: Pick<KeyBuffers, 'chunk'>, n: number): Chunk[] {
  const out: Chunk[] = [];
  for (let first = 0, index = 0; first < n; first += keys.chunk, index++)
    out.push({ index, first, count: Math.min(keys.chunk, n - first) });
  return out;
}

/** Buffer `index` of a stream (a bench bug when absent). */
export function chunkBuffer(stream: readonly GPUBuffer[], index: number): GPUBuffer {
  const b = stream[index];
  if (!b) throw new Error(`key stream has no chunk ${index}`);
  return b;
}

/** Inserts the first n hit keys, one call per chunk, each timed with `time` when given. */
export function encodeInsertFirst(
  table: BenchTable,
  encoder: GPUCommandEncoder,
  keys: KeyBuffers,
  n: number,
  time?: () => TimestampWrites,
): void {
  for (const c of chunksOf(keys, n))
    table.encodeInsert(encoder, chunkBuffer(keys.hitKeys, c.index), chunkBuffer(keys.hitValues, c.index), c.count, time?.());
}

/** Throws unless positions [0, n) are in the first chunk: for workloads whose batch is one call. */
export function assertOneChunk(keys: Pick<KeyBuffers, 'chunk'>, n: number, what: string): void {
  if (n > keys.chunk)
    throw new Error(`${what} takes its ${n} keys in one buffer, but a key buffer holds ${keys.chunk}: use a smaller --capacity-log2`);
}
