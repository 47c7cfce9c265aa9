import { countReservedKernel } from '../count-reserved-kernel';
import { ReservedKeyError } from '../errors';
import type { Gpu } from '../gpu';
import { packFlagsKernel } from '../pack-flags-kernel';
import { STORAGE_USAGE } from '../usage';
import type { DictionaryEngine } from './engine';
import { type KeySpec, reservedIndices } from './keys';
import type { FindResult, KeyType } from './types';

/** Keys per chunk of a pipelined host find unless DictionaryTable.findChunkKeys says otherwise: 8 MiB of u32 keys. */
export const HOST_FIND_CHUNK_KEYS = 2 ** 21;

/**
 * A host find, in chunks when large, pipelined: while the GPU looks up chunk k and copies its answers to
 * a mapped buffer, the host copies chunk k + 1's keys into a staging buffer; then it copies chunk
 * k's answers out. The host's two copies are the floor of a find from host arrays (the GPU's part
 * hides behind them), where one batch at a time waits for each stage in turn.
 *
 * With `countReserved` (large u32 batches, not scanned on the host), reserved keys are counted on the
 * GPU chunk by chunk and the count comes back with the last chunk (a find changes nothing): a batch
 * holding one throws ReservedKeyError, and `out` then holds unspecified answers.
 */
export async function findInChunks<K extends KeyType>(
  gpu: Gpu,
  engine: DictionaryEngine<K>,
  spec: KeySpec<K>,
  words: Uint32Array,
  answers: FindResult,
  where: string,
  countReserved: boolean,
  chunkKeys = HOST_FIND_CHUNK_KEYS,
): Promise<void> {
  const perKey = spec.wordsPerKey;
  const n = words.length / perKey;
  if (n === 0) return;
  const count = countReserved ? gpu.pool.acquire(4, STORAGE_USAGE, `${where}.reserved-count`) : undefined;
  const reserved = new Uint32Array(1);
  if (count) gpu.write(count, new Uint32Array(1));
  const held: GPUBuffer[] = [];
  const take = (bytes: number, label: string) => {
    const b = gpu.pool.acquire(bytes, STORAGE_USAGE, label);
    held.push(b);
    return b;
  };
  let inflight: Promise<unknown> | undefined;
  try {
    for (let at = 0; at < n; at += chunkKeys) {
      const m = Math.min(chunkKeys, n - at);
      const chunk = words.subarray(at * perKey, (at + m) * perKey);
      const keys = take(4 * chunk.length, `${where}.keys`);
      await gpu.writeStaged(keys, chunk);
      const values = take(4 * m, `${where}.values`);
      const found = take(4 * m, `${where}.found`);
      const packed = take(4 * Math.ceil(m / 4), `${where}.found-bytes`);
      const encoder = gpu.device.createCommandEncoder({ label: `${where} chunk` });
      encoder.clearBuffer(values, 0, 4 * m);
      encoder.clearBuffer(found, 0, 4 * m);
      if (count)
        countReservedKernel.encode(gpu, encoder, {
          buffers: { words: keys, count },
          params: { n: m, first: spec.firstReserved ?? 0 },
          invocations: m,
          maxWorkgroups: 4096,
          label: 'count-reserved',
        });
      engine.encodeFind(encoder, keys, m, values, found);
      packFlagsKernel.encode(gpu, encoder, {
        buffers: { flags: found, packed },
        params: { n: m },
        invocations: Math.ceil(m / 4),
        maxWorkgroups: 4096,
        label: 'pack-flags',
      });
      const last = at + m >= n;
      const read = gpu.submitAndRead(encoder, [
        { buffer: values, byteLength: 4 * m, into: answers.values.subarray(at, at + m) },
        { buffer: packed, byteLength: m, into: answers.found.subarray(at, at + m) },
        // The reserved-key count comes back with the last chunk's answers.
        ...(count && last ? [{ buffer: count, byteLength: 4, into: reserved }] : []),
      ]);
      // One chunk's answers in flight while the next chunk's keys go up.
      if (inflight) await inflight;
      inflight = read;
      // This chunk's buffers go back to the pool: queue order keeps them intact until its passes ran.
      for (const b of held.splice(0)) gpu.pool.release(b);
    }
    if (inflight) await inflight;
    if (reserved[0] !== 0) throw new ReservedKeyError(where, reservedIndices(spec, words), spec.reservedNames, 'none');
  } finally {
    inflight?.catch(() => {});
    for (const b of held) gpu.pool.release(b);
    if (count) gpu.pool.release(count);
  }
}
