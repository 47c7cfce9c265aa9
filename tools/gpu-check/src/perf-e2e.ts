/**
 * Where the time of a find (and a build) from host arrays goes, and how fast each way of moving
 * bytes between host arrays and the GPU runs through Dawn:
 *   node perf-e2e.mjs [log2 slots, default 27] [load, default 0.5]
 * Upload ways: one writeBuffer of the whole array; writeBuffer in chunks; a reused MAP_WRITE
 * staging buffer (mapAsync, set, unmap, copy) in chunks. Download: a copy, mapAsync and the copy
 * out into a fresh array and into one already in use. Then the table's host find and insert,
 * wall clock, beside their parts (the reserved-key scan, a fresh result array). Median of REPS
 * (default 3), wall clock.
 */
import { BufferUsage, MapMode, requestGpu, reservedIndices, u32KeySpec } from '@gpuhash/core';
import { LinearProbeTable } from '@gpuhash/linear-probe';

const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}`);
const log2 = Number(process.argv[2] ?? (gpu.isSoftware ? 18 : 27));
const load = Number(process.argv[3] ?? 0.5);
const reps = Number(process.env.REPS ?? 3);
const n = Math.round(load * 2 ** log2);
const bytes = 4 * n;
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number;
async function time(label: string, body: () => Promise<void> | void, movedBytes = 0): Promise<number> {
  const samples: number[] = [];
  for (let r = 0; r < reps + 1; r++) {
    await gpu.finish();
    const t0 = performance.now();
    await body();
    if (r > 0) samples.push(performance.now() - t0);
  }
  const ms = median(samples);
  console.log(`${label}: ${ms.toFixed(1)} ms${movedBytes > 0 ? ` (${(movedBytes / ms / 1e6).toFixed(2)} GB/s)` : ''}`);
  return ms;
}

const keys = new Uint32Array(n);
for (let i = 0; i < n; i++) keys[i] = (Math.imul(2 * i + 1, 0x9e3779b1) >>> 0) % 0xfffffff0;
const values = keys.map((k) => k ^ 0x5bd1e995);
const target = gpu.createBuffer(bytes, 'perf-e2e.target', BufferUsage.STORAGE | BufferUsage.COPY_DST | BufferUsage.COPY_SRC);
console.log(`${n} keys, ${(bytes / 2 ** 20).toFixed(0)} MiB per array`);

// Uploads.
await time(
  'upload: one writeBuffer',
  async () => {
    gpu.device.queue.writeBuffer(target, 0, keys);
    await gpu.finish();
  },
  bytes,
);
for (const chunkMb of [4, 16, 64]) {
  const chunk = chunkMb * 2 ** 20;
  await time(
    `upload: writeBuffer in ${chunkMb} MiB chunks`,
    async () => {
      for (let at = 0; at < bytes; at += chunk) gpu.device.queue.writeBuffer(target, at, keys.buffer, at, Math.min(chunk, bytes - at));
      await gpu.finish();
    },
    bytes,
  );
}
for (const chunkMb of [16, 64]) {
  const chunk = chunkMb * 2 ** 20;
  const stagings = [0, 1].map((s) =>
    gpu.device.createBuffer({ size: chunk, usage: BufferUsage.MAP_WRITE | BufferUsage.COPY_SRC, label: `perf-e2e.up${s}` }),
  );
  await time(
    `upload: two MAP_WRITE staging buffers of ${chunkMb} MiB, alternating`,
    async () => {
      let k = 0;
      for (let at = 0; at < bytes; at += chunk, k++) {
        const s = stagings[k & 1] as GPUBuffer;
        const len = Math.min(chunk, bytes - at);
        await s.mapAsync(MapMode.WRITE, 0, chunk);
        new Uint8Array(s.getMappedRange(0, chunk)).set(new Uint8Array(keys.buffer, at, len));
        s.unmap();
        const enc = gpu.device.createCommandEncoder();
        enc.copyBufferToBuffer(s, 0, target, at, len);
        gpu.submit([enc.finish()]);
      }
      await gpu.finish();
    },
    bytes,
  );
  for (const s of stagings) s.destroy();
}

// Downloads.
const read = gpu.device.createBuffer({ size: bytes, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST, label: 'perf-e2e.read' });
const reused = new Uint32Array(n).fill(1);
for (const fresh of [true, false]) {
  await time(
    `download: copy, mapAsync, copy out into ${fresh ? 'a fresh array' : 'an array in use'}`,
    async () => {
      const enc = gpu.device.createCommandEncoder();
      enc.copyBufferToBuffer(target, 0, read, 0, bytes);
      gpu.submit([enc.finish()]);
      await read.mapAsync(MapMode.READ, 0, bytes);
      const range = read.getMappedRange(0, bytes);
      if (fresh) new Uint32Array(range.slice(0));
      else reused.set(new Uint32Array(range));
      read.unmap();
    },
    bytes,
  );
}
read.destroy();

// Host-side parts.
await time('reserved-key scan', () => {
  reservedIndices(u32KeySpec(0xfffffffd, 'reserved'), keys);
});
await time('fresh Uint32Array, written once', () => {
  new Uint32Array(n).fill(7);
});

await time('GPU array of the batch: create, first use, destroy', async () => {
  const a = gpu.createArray('u32', n);
  const enc = gpu.device.createCommandEncoder();
  enc.clearBuffer(a.buffer, 0, 4);
  gpu.submit([enc.finish()]);
  await gpu.finish();
  a.destroy();
});
await time(
  'uploadStaged (new GPU array)',
  async () => {
    const a = await gpu.uploadStaged(keys);
    await gpu.finish();
    a.destroy();
  },
  bytes,
);

// The table's host API.
const table = await LinearProbeTable.create(gpu, { capacity: 2 ** log2, growth: false });
const out = { values: new Uint32Array(n).fill(1), found: new Uint8Array(n).fill(1) };
await time(
  'table insert (host arrays)',
  async () => {
    await table.clear();
    await table.insert(keys, values);
  },
  8 * n,
);
await time(
  'table find (host keys)',
  async () => {
    await table.find(keys);
  },
  9 * n,
);
await time(
  'table find (host keys, out arrays in use)',
  async () => {
    await table.find(keys, { out });
  },
  9 * n,
);
table.destroy();
target.destroy();
process.exit(0);
