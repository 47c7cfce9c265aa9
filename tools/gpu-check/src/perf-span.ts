/**
 * What random reads cost as the span they fall in grows past one storage binding: a random 4-byte
 * gather (2^27 reads) read through @gpuhash/kernels' window accessors (one binding per window of
 * 1 GiB, a switch per read). Three groups of cases:
 * - dense spans of 1, 2, 4 and 8 GiB, in 1 to 8 windows: what the accessors cost and what the
 *   span costs;
 * - sparse spans: 2 GiB of reads spread over 8 GiB, every fourth chunk of 64 KiB, 2 MiB or 32 MiB
 *   touched. Reads that stay fast when the chunks are as large as the GPU's pages, and slow when
 *   they are smaller, name the page size behind the cliff;
 * - ordered spans: reads over 8 GiB, but the reads of one window together, in one dispatch per
 *   window or in one dispatch whose invocations go through the windows in turn. What a batch
 *   sorted by window would gain.
 *   node perf-span.mjs
 */
import { type Kernel, requestGpu } from '@gpuhash/core';
import { composeWgsl, fmix32Module, gridModule, windowNames } from '@gpuhash/kernels';

const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}`);
const N_LOG2 = gpu.isSoftware ? 18 : 27;
const N = 2 ** N_LOG2;
const WINDOWS = 8;
/** Words in one window: 1 GiB on hardware. */
const WINDOW_LOG2 = gpu.isSoftware ? 17 : 28;

interface Case {
  readonly label: string;
  /** log2 of the words the reads fall in before spreading. */
  readonly denseLog2: number;
  /** Touched chunks of 2^chunkLog2 words, one in `stride`. */
  readonly chunkLog2?: number;
  readonly stride?: number;
  /** `dispatches`: one dispatch per window; `phases`: one dispatch, invocations through the windows in turn. */
  readonly order?: 'dispatches' | 'phases';
}

const W = WINDOW_LOG2;
const cases: Case[] = [
  { label: 'dense 1 window', denseLog2: W },
  { label: 'dense 2 windows', denseLog2: W + 1 },
  { label: 'dense 4 windows', denseLog2: W + 2 },
  { label: 'dense 8 windows', denseLog2: W + 3 },
  { label: 'sparse 1/4 of 8 windows', denseLog2: W + 1, chunkLog2: W - 14, stride: 4 },
  { label: 'sparse 1/4 of 8 windows', denseLog2: W + 1, chunkLog2: W - 9, stride: 4 },
  { label: 'sparse 1/4 of 8 windows', denseLog2: W + 1, chunkLog2: W - 5, stride: 4 },
  { label: 'ordered 8 windows, a dispatch each', denseLog2: W, order: 'dispatches' },
  { label: 'ordered 8 windows, one dispatch in phases', denseLog2: W, order: 'phases' },
];

const names = windowNames('words', WINDOWS);
const kernel: Kernel = {
  name: 'perf-span.gather',
  workgroupSize: 256,
  source: composeWgsl(
    /* wgsl */ `
struct Params { n: u32, mask: u32, chunk_log2: u32, stride: u32, base: u32, phase_shift: u32, never: u32, pad: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> sink: array<u32>;
${names.map((n, k) => `@group(0) @binding(${k + 2}) var<storage, read> ${n}: array<u32>;`).join('\n')}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  var acc = 0u;
  let low = (1u << params.chunk_log2) - 1u;
  for (var i = grid_thread(wid, nwg, lid, 256u); i < params.n; i += grid_threads(nwg, 256u)) {
    let r = hash_fmix32(i ^ 0x2545f491u) & params.mask;
    var at = (((r >> params.chunk_log2) * params.stride) << params.chunk_log2) | (r & low);
    // Phases: the i-th read falls in window i >> phase_shift.
    if (params.phase_shift != 0u) { at += (i >> params.phase_shift) << ${W}u; }
    acc ^= words[params.base + at];
  }
  if (acc == params.never) { sink[0] = acc; }
}`,
    { modules: [gridModule, fmix32Module], windows: [{ name: 'words', element: 'u32', count: WINDOWS, elementsLog2: W }] },
  ),
};

const sink = gpu.createBuffer(16, 'perf-span.sink');
const buffers = Array.from({ length: WINDOWS }, (_, k) => gpu.createBuffer(4 * 2 ** W, `perf-span.window ${k}`));
const init = gpu.device.createCommandEncoder();
for (const b of buffers) gpu.encodeFill(init, b, 0x12345678, 2 ** W);
gpu.submit([init.finish()]);

const REPS = 5;
for (const c of cases) {
  const chunkLog2 = c.chunkLog2 ?? 31;
  const stride = c.stride ?? 1;
  const dispatches =
    c.order === 'dispatches'
      ? Array.from({ length: WINDOWS }, (_, k) => [N / WINDOWS, k * 2 ** W, 0])
      : [[N, 0, c.order === 'phases' ? N_LOG2 - Math.log2(WINDOWS) : 0]];
  const params = dispatches.map(([n, base, phaseShift]) =>
    gpu.uniforms(new Uint32Array([n ?? 0, 2 ** c.denseLog2 - 1, chunkLog2, stride, base ?? 0, phaseShift ?? 0, 0xdeadbeef, 0])),
  );
  const samples: number[] = [];
  for (let round = 0; round < 3 + REPS; round++) {
    const timer = gpu.createTimer(dispatches.length);
    const enc = gpu.device.createCommandEncoder();
    dispatches.forEach(([n], k) => {
      const p = params[k];
      if (p) gpu.encodeDispatch(enc, kernel, { bindings: [p, sink, ...buffers], invocations: n ?? 0 }, timer.slot(`gather ${k}`));
    });
    timer.resolve(enc);
    gpu.submit([enc.finish()]);
    timer.submitted();
    const t = await timer.read();
    timer.destroy();
    if (round >= 3) samples.push(t.passes.reduce((s, p) => s + p.ms, 0));
  }
  for (const p of params) gpu.pool.release(p);
  samples.sort((a, b) => a - b);
  const med = samples[Math.floor(samples.length / 2)] ?? 0;
  const gib = (log2: number) => (4 * 2 ** log2) / 2 ** 30;
  const touched = c.order ? gib(W) * WINDOWS : gib(c.denseLog2);
  const span = c.order ? touched : touched * stride;
  const label = c.chunkLog2 === undefined ? c.label : `${c.label}, chunks of ${(4 * 2 ** c.chunkLog2) / 1024} KiB`;
  console.log(`${label.padEnd(52)} ${touched} GiB of ${span}: ${med.toFixed(3)} ms  ${(N / med / 1e6).toFixed(2)} G/s`);
}
for (const b of buffers) b.destroy();
