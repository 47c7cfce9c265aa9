/**
 * What a dispatch costs when it has (almost) nothing to do, by how it is encoded: N dispatches each
 * in a compute pass of its own (what core's encodeDispatch does; also with timestamps on each), or
 * all N in one compute pass.
 * Multi-pass operations pay this per pass: Horton's empty insert rounds, HKV's empty window copies,
 * the fixed costs of small tables. GPU time between a timestamp before the first dispatch and one
 * after the last, median of REPS (default 7) after 2 warm-ups; per dispatch in microseconds.
 *   node perf-passes.mjs [N (default 128)]
 * Kernels: `tiny` (one workgroup of 64 reading a word), `idle-grid` (4096 workgroups of 256 that
 * read a list length of 0 and leave, as HKV's copy passes with an empty list do), `work` (4096
 * workgroups adding into a 4 MB array, each dispatch reading what the last one wrote).
 */
import { BufferUsage, MapMode, requestGpu } from '@gpuhash/core';

const gpu = await requestGpu({ allowSoftware: true });
const device = gpu.device;
console.log(`device: ${gpu.describe()}`);
const N = Number(process.argv[2] ?? 128);
const REPS = Number(process.env.REPS ?? 7);

const kernels: Record<string, { wgsl: string; workgroups: number }> = {
  tiny: {
    workgroups: 1,
    wgsl: `
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32) {
  if (data[0] == 0xdeadbeefu && lid == 0u) { data[1] = 1u; }
}`,
  },
  'idle-grid': {
    workgroups: 4096,
    wgsl: `
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
var<workgroup> wg_count: u32;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  if (lid == 0u) { wg_count = data[0]; }
  let count = workgroupUniformLoad(&wg_count);
  for (var i = wid.x * 256u + lid; i < count; i += 4096u * 256u) { data[1u + i] += 1u; }
}`,
  },
  work: {
    workgroups: 4096,
    wgsl: `
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let i = wid.x * 256u + lid;
  data[1u + i] += data[1u + ((i + 1u) & 1048575u)] & 1u;
}`,
  },
};

const data = device.createBuffer({ size: 4 * (1 + 2 ** 20) + 16, usage: BufferUsage.STORAGE | BufferUsage.COPY_DST });
const querySet = device.createQuerySet({ type: 'timestamp', count: 2 });
const resolve = device.createBuffer({ size: 16, usage: BufferUsage.QUERY_RESOLVE | BufferUsage.COPY_SRC });
const read = device.createBuffer({ size: 16, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST });

type Layout = 'own passes' | 'own passes, each timed' | 'one pass' | 'one pass, a bind group each';
// Per-pass timestamps, as a benchmark that times every pass writes them.
const stamps = device.createQuerySet({ type: 'timestamp', count: 2 * Math.max(N, 1) });

async function timeOnce(name: string, layout: Layout, n: number): Promise<number> {
  const k = kernels[name] as { wgsl: string; workgroups: number };
  const pipeline = pipelines.get(name) as GPUComputePipeline;
  const group = () =>
    device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: data } }] });
  const shared = group();
  const enc = device.createCommandEncoder();
  enc.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0 } }).end();
  if (layout === 'own passes' || layout === 'own passes, each timed') {
    for (let d = 0; d < n; d++) {
      const timed = layout === 'own passes, each timed';
      const pass = enc.beginComputePass(
        timed ? { timestampWrites: { querySet: stamps, beginningOfPassWriteIndex: 2 * d, endOfPassWriteIndex: 2 * d + 1 } } : {},
      );
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group());
      pass.dispatchWorkgroups(k.workgroups);
      pass.end();
    }
  } else {
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    for (let d = 0; d < n; d++) {
      pass.setBindGroup(0, layout === 'one pass' ? shared : group());
      pass.dispatchWorkgroups(k.workgroups);
    }
    pass.end();
  }
  enc.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: 1 } }).end();
  enc.resolveQuerySet(querySet, 0, 2, resolve, 0);
  enc.copyBufferToBuffer(resolve, 0, read, 0, 16);
  device.queue.submit([enc.finish()]);
  await read.mapAsync(MapMode.READ);
  const t = new BigUint64Array(read.getMappedRange().slice(0));
  read.unmap();
  return Number((t[1] as bigint) - (t[0] as bigint)) / 1000;
}

const pipelines = new Map<string, GPUComputePipeline>();
for (const [name, k] of Object.entries(kernels)) {
  pipelines.set(
    name,
    device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: k.wgsl }), entryPoint: 'main' } }),
  );
}

for (const name of Object.keys(kernels)) {
  for (const layout of ['own passes', 'own passes, each timed', 'one pass', 'one pass, a bind group each'] as Layout[]) {
    const samples: number[] = [];
    for (let r = 0; r < 2 + REPS; r++) {
      const us = await timeOnce(name, layout, N);
      if (r >= 2) samples.push(us);
    }
    const empty: number[] = [];
    for (let r = 0; r < 2 + REPS; r++) {
      const us = await timeOnce(name, layout, 0);
      if (r >= 2) empty.push(us);
    }
    samples.sort((a, b) => a - b);
    empty.sort((a, b) => a - b);
    const med = samples[samples.length >> 1] as number;
    const base = empty[empty.length >> 1] as number;
    console.log(
      `${name.padEnd(10)} ${layout.padEnd(28)} ${N} dispatches ${med.toFixed(1)} us (${base.toFixed(1)} us with none): ${((med - base) / N).toFixed(2)} us a dispatch`,
    );
  }
}
process.exit(0);
