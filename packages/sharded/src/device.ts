import { type DeviceArray, defineKernel, encodeCompact, type Gpu, STORAGE_USAGE, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { shardOfModule } from './hash';

const WG = 256;

/** flags[i] = 1 where key i belongs to `params.shard` (u64 keys: words 2i, 2i + 1). */
const flagsKernel = defineKernel({
  name: 'sharded.flags',
  workgroupSize: WG,
  params: { n: 'u32', shards: 'u32', shard: 'u32', seed: 'u32', wide: 'u32' },
  bindings: { params: uniform(), keys: storage('read', 'u32'), flags: storage('read_write', 'u32') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WG)} {
  ${gridStrideLoop('i', 'params.n', WG)} {
    let wide = params.wide != 0u;
    var lo: u32; var hi = 0u;
    if (wide) { lo = keys[2u * i]; hi = keys[2u * i + 1u]; } else { lo = keys[i]; }
    flags[i] = select(0u, 1u, shard_of(lo, hi, wide, params.shards, params.seed) == params.shard);
  }
}`,
      { modules: [gridModule, shardOfModule] },
    ),
});

/** out[j * width + w] = src[index[j] * width + w] for j < n: a shard's keys (or values) in batch order. */
const gatherKernel = defineKernel({
  name: 'sharded.gather',
  workgroupSize: WG,
  params: { n: 'u32', width: 'u32' },
  bindings: { params: uniform(), index: storage('read', 'u32'), src: storage('read', 'u32'), out: storage('read_write', 'u32') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WG)} {
  ${gridStrideLoop('j', 'params.n', WG)} {
    let at = index[j] * params.width;
    for (var w = 0u; w < params.width; w++) { out[j * params.width + w] = src[at + w]; }
  }
}`,
      { modules: [gridModule] },
    ),
});

/** out[index[j]] = src[j] for j < n: a shard's answers back in batch order. */
const scatterKernel = defineKernel({
  name: 'sharded.scatter',
  workgroupSize: WG,
  params: { n: 'u32' },
  bindings: { params: uniform(), index: storage('read', 'u32'), src: storage('read', 'u32'), out: storage('read_write', 'u32') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(WG)} {
  ${gridStrideLoop('j', 'params.n', WG)} { out[index[j]] = src[j]; }
}`,
      { modules: [gridModule] },
    ),
});

/** A device batch split by shard on its GPU: per shard, the batch indices of its keys and the keys themselves. */
export interface DevicePartition {
  n: number;
  counts: number[];
  /** Batch indices of shard s's keys, ascending (undefined where it has none). */
  indices: (DeviceArray<'u32'> | undefined)[];
  /** Shard s's keys in batch order (undefined where it has none). */
  keys: (DeviceArray<'u32'> | undefined)[];
  destroy(): void;
}

/**
 * Partitions a device-resident batch on its own GPU: a flag pass and a stable compaction per shard
 * (core's encodeCompact), the counts read back, then a gather of each shard's keys.
 */
export function partitionOnDevice(
  gpu: Gpu,
  keys: DeviceArray<'u32'>,
  wordsPerKey: 1 | 2,
  shards: number,
  seed: number,
): Promise<DevicePartition> {
  // On the Gpu's queue, with its error scopes: a WebGPU error becomes a typed one.
  return gpu.run('ShardedTable.partition', () => partition(gpu, keys, wordsPerKey, shards, seed));
}

async function partition(gpu: Gpu, keys: DeviceArray<'u32'>, wordsPerKey: 1 | 2, shards: number, seed: number): Promise<DevicePartition> {
  const n = keys.length / wordsPerKey;
  const flags = gpu.createArray('u32', Math.max(n, 1), 'sharded.flags');
  const counts = gpu.createBuffer(4 * shards, 'sharded.counts', STORAGE_USAGE);
  const all = Array.from({ length: shards }, (_, s) => gpu.createArray('u32', Math.max(n, 1), `sharded.indices.${s}`));
  try {
    const encoder = gpu.device.createCommandEncoder({ label: 'sharded.partition' });
    for (let s = 0; s < shards; s++) {
      flagsKernel.variant().encode(gpu, encoder, {
        buffers: { keys: keys.buffer, flags: flags.buffer },
        params: { n, shards, shard: s, seed, wide: wordsPerKey === 2 ? 1 : 0 },
        invocations: n,
      });
      encodeCompact(gpu, encoder, { flags: flags.buffer, n, indices: (all[s] as DeviceArray<'u32'>).buffer, count: counts, countIndex: s });
    }
    gpu.submit([encoder.finish()]);
    const countWords = new Uint32Array(await gpu.readBytes(counts, 0, 4 * shards));
    const indices: (DeviceArray<'u32'> | undefined)[] = [];
    const parts: (DeviceArray<'u32'> | undefined)[] = [];
    const gather = gpu.device.createCommandEncoder({ label: 'sharded.gather' });
    for (let s = 0; s < shards; s++) {
      const c = countWords[s] as number;
      if (c === 0) {
        all[s]?.destroy();
        indices.push(undefined);
        parts.push(undefined);
        continue;
      }
      const index = all[s] as DeviceArray<'u32'>;
      indices.push(index);
      const out = gpu.createArray('u32', c * wordsPerKey, `sharded.keys.${s}`);
      gatherKernel.variant().encode(gpu, gather, {
        buffers: { index: index.buffer, src: keys.buffer, out: out.buffer },
        params: { n: c, width: wordsPerKey },
        invocations: c,
      });
      parts.push(out);
    }
    gpu.submit([gather.finish()]);
    return {
      n,
      counts: Array.from(countWords),
      indices,
      keys: parts,
      destroy() {
        for (const a of [...indices, ...parts]) a?.destroy();
      },
    };
  } catch (error) {
    for (const a of all) a.destroy();
    throw error;
  } finally {
    flags.destroy();
    counts.destroy();
  }
}

/** Gathers `src` (width 1) by a shard's batch indices: its values, in the order of its keys. */
export function gatherOnDevice(
  gpu: Gpu,
  index: DeviceArray<'u32'>,
  src: DeviceArray<'u32'>,
  n: number,
  label: string,
): Promise<DeviceArray<'u32'>> {
  return gpu.run('ShardedTable.gather', async () => {
    const out = gpu.createArray('u32', n, label);
    const encoder = gpu.device.createCommandEncoder({ label });
    gatherKernel.variant().encode(gpu, encoder, {
      buffers: { index: index.buffer, src: src.buffer, out: out.buffer },
      params: { n, width: 1 },
      invocations: n,
    });
    gpu.submit([encoder.finish()]);
    return out;
  });
}

/** Writes each shard's answers (`parts[s]`, one u32 per key) to `out` at its keys' batch indices. */
export function scatterOnDevice(
  gpu: Gpu,
  partition: DevicePartition,
  parts: readonly (DeviceArray<'u32'> | undefined)[],
  out: DeviceArray<'u32'>,
): Promise<void> {
  return gpu.run('ShardedTable.scatter', async () => scatter(gpu, partition, parts, out));
}

function scatter(gpu: Gpu, partition: DevicePartition, parts: readonly (DeviceArray<'u32'> | undefined)[], out: DeviceArray<'u32'>): void {
  const encoder = gpu.device.createCommandEncoder({ label: 'sharded.scatter' });
  partition.counts.forEach((c, s) => {
    const index = partition.indices[s];
    const src = parts[s];
    if (c === 0 || !index || !src) return;
    scatterKernel
      .variant()
      .encode(gpu, encoder, { buffers: { index: index.buffer, src: src.buffer, out: out.buffer }, params: { n: c }, invocations: c });
  });
  gpu.submit([encoder.finish()]);
}
