/**
 * What random reads cost as the span they fall in grows past one storage binding: a random 4-byte
 * gather (2^27 reads) over W windows of 2^s words each, read through @gpuhash/kernels' window
 * accessors (one binding per window, a switch per read), against the same span in one binding
 * where it fits. Separates what the accessors cost (several windows, small span) from what the
 * span costs (1 GiB, 2, 4, 8 GiB).
 *   node perf-span.mjs
 */
import { type Kernel, requestGpu } from '@gpuhash/core';
import { composeWgsl, fmix32Module, gridModule, type StorageWindows, windowNames } from '@gpuhash/kernels';

const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}`);
const N = gpu.isSoftware ? 2 ** 18 : 2 ** 27;
const GIB_WORDS_LOG2 = 28;
// [windows, log2 words per window]: spans of 1 GiB split 1, 2, 4 and 8 ways, then 2, 4, 8 GiB.
const cases: [number, number][] = gpu.isSoftware
  ? [
      [1, 20],
      [4, 18],
    ]
  : [
      [1, GIB_WORDS_LOG2],
      [2, GIB_WORDS_LOG2 - 1],
      [4, GIB_WORDS_LOG2 - 2],
      [8, GIB_WORDS_LOG2 - 3],
      [2, GIB_WORDS_LOG2],
      [4, GIB_WORDS_LOG2],
      [8, GIB_WORDS_LOG2],
    ];

function kernel(count: number, log2: number): Kernel {
  const windows: StorageWindows[] = count > 1 ? [{ name: 'words', element: 'u32', count, elementsLog2: log2 }] : [];
  const names = count > 1 ? windowNames('words', count) : ['words'];
  const decls = names.map((n, k) => `@group(0) @binding(${k + 2}) var<storage, read> ${n}: array<u32>;`).join('\n');
  return {
    name: `perf-span.${count}x2^${log2}`,
    workgroupSize: 256,
    source: composeWgsl(
      /* wgsl */ `
struct Params { n: u32, mask: u32, never: u32, pad: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> sink: array<u32>;
${decls}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  var acc = 0u;
  for (var i = grid_thread(wid, nwg, lid, 256u); i < params.n; i += grid_threads(nwg, 256u)) {
    acc ^= words[hash_fmix32(i ^ 0x2545f491u) & params.mask];
  }
  if (acc == params.never) { sink[0] = acc; }
}`,
      { modules: [gridModule, fmix32Module], windows },
    ),
  };
}

const sink = gpu.createBuffer(16, 'perf-span.sink');
const REPS = 5;
for (const [count, log2] of cases) {
  const buffers = Array.from({ length: count }, (_, k) => gpu.createBuffer(4 * 2 ** log2, `perf-span.window ${k}`));
  const init = gpu.device.createCommandEncoder();
  for (const b of buffers) gpu.encodeFill(init, b, 0x12345678, 2 ** log2);
  gpu.submit([init.finish()]);
  const k = kernel(count, log2);
  const params = gpu.uniforms(new Uint32Array([N, count * 2 ** log2 - 1, 0xdeadbeef, 0]));
  const samples: number[] = [];
  for (let round = 0; round < 3 + REPS; round++) {
    const timer = gpu.createTimer(1);
    const enc = gpu.device.createCommandEncoder();
    gpu.encodeDispatch(enc, k, { bindings: [params, sink, ...buffers], invocations: N }, timer.slot('gather'));
    timer.resolve(enc);
    gpu.submit([enc.finish()]);
    timer.submitted();
    const t = await timer.read();
    timer.destroy();
    if (round >= 3) samples.push(t.passes[0]?.ms ?? 0);
  }
  gpu.pool.release(params);
  for (const b of buffers) b.destroy();
  samples.sort((a, b) => a - b);
  const med = samples[Math.floor(samples.length / 2)] ?? 0;
  const gib = (count * 4 * 2 ** log2) / 2 ** 30;
  console.log(`span ${gib} GiB in ${count} binding(s): ${med.toFixed(3)} ms  ${(N / med / 1e6).toFixed(2)} G/s`);
}
