import type { Gpu, Kernel } from '@gpuhash/core';
import { composeWgsl, fmix32Module, gridModule } from '@gpuhash/kernels';
import { computeEntry, gridLoop, WORKGROUP } from './gpu/streams';
import { samplesOf, timeReps } from './gpu/time-reps';
import type { HostLink } from './host-link';
import { type Stats, summarize } from './stats';

/** One memory roofline kernel's result. */
export interface RooflineResult {
  /** Operations per pass: 4-byte reads, 128-byte lines, or 16-byte vectors copied. */
  ops: number;
  /** Bytes moved per pass (for the copy: read plus written). */
  bytes: number;
  gpuMs: Stats;
  /** Operations per second (median time). */
  opsPerSecond: number;
  /** Bytes per second / 1e9 (median time). */
  gbPerSecond: number;
}

export interface Roofline {
  /** Size of the buffers read: larger than any cache on a GPU, sized down on software adapters. */
  bufferBytes: number;
  /** Each invocation reads one u32 at a random index. */
  gather4: RooflineResult;
  /** Eight invocations read one random 128-byte line, 16 bytes each. */
  gather128: RooflineResult;
  /** Each invocation copies one 16-byte vector, in order. */
  copy: RooflineResult;
  /** Host memory to the GPU and back through WebGPU: the floor of end-to-end runs (runs with them only). */
  hostLink?: HostLink;
}

// Sums fold into a word written only when it equals an impossible value, so no read is dead code.
const gather4Kernel: Kernel = {
  name: 'bench.roofline.gather4',
  workgroupSize: WORKGROUP,
  source: composeWgsl(
    /* wgsl */ `
struct Params { n: u32, mask: u32, seed: u32, never: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> sink: array<u32>;
${computeEntry} {
  var acc = 0u;
  ${gridLoop('params.n')} {
    acc ^= data[hash_fmix32(i ^ params.seed) & params.mask];
  }
  if (acc == params.never) { sink[0] = acc; }
}`,
    { modules: [gridModule, fmix32Module] },
  ),
};

const gather128Kernel: Kernel = {
  name: 'bench.roofline.gather128',
  workgroupSize: WORKGROUP,
  source: composeWgsl(
    /* wgsl */ `
struct Params { n: u32, mask: u32, seed: u32, never: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> data: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> sink: array<u32>;
${computeEntry} {
  var acc = vec4<u32>(0u);
  // Invocation i reads the (i % 8)-th 16 bytes of random line i / 8: adjacent lanes share a line.
  ${gridLoop('params.n')} {
    let line = hash_fmix32((i >> 3u) ^ params.seed) & params.mask;
    acc ^= data[line * 8u + (i & 7u)];
  }
  let folded = acc.x ^ acc.y ^ acc.z ^ acc.w;
  if (folded == params.never) { sink[0] = folded; }
}`,
    { modules: [gridModule, fmix32Module] },
  ),
};

const copyKernel: Kernel = {
  name: 'bench.roofline.copy',
  workgroupSize: WORKGROUP,
  source: composeWgsl(
    /* wgsl */ `
struct Params { n: u32, _p0: u32, _p1: u32, _p2: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<u32>>;
${computeEntry} {
  ${gridLoop('params.n')} { dst[i] = src[i]; }
}`,
    { modules: [gridModule] },
  ),
};

// Non-zero contents: some GPUs compress all-zero memory, which would flatter the rooflines.
const fillKernel: Kernel = {
  name: 'bench.roofline.fill',
  workgroupSize: WORKGROUP,
  source: composeWgsl(
    /* wgsl */ `
struct Params { n: u32, _p0: u32, _p1: u32, _p2: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
${computeEntry} {
  ${gridLoop('params.n')} { data[i] = hash_fmix32(i + 1u); }
}`,
    { modules: [gridModule, fmix32Module] },
  ),
};

export interface RooflineOptions {
  reps: number;
  warmup: number;
  warmupMs: number;
}

function largestPow2AtMost(x: number): number {
  return 2 ** Math.floor(Math.log2(x));
}

/** Sizes: >= 1 GiB on a GPU (bounded by the binding limit), 64 MiB on a software adapter. */
export function rooflineSizes(gpu: Gpu): { bufferBytes: number; gathers: number; lines: number; copyVectors: number } {
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  const bufferBytes = largestPow2AtMost(Math.min(gpu.isSoftware ? 64 * 2 ** 20 : 2 ** 30, limit));
  return {
    bufferBytes,
    gathers: gpu.isSoftware ? 2 ** 20 : 2 ** 26,
    lines: gpu.isSoftware ? 2 ** 15 : 2 ** 22,
    // The copy reads half the buffer's size and writes as much into a second buffer.
    copyVectors: bufferBytes / 2 / 16,
  };
}

function result(ops: number, bytes: number, samples: number[]): RooflineResult {
  const gpuMs = summarize(samples);
  const seconds = gpuMs.median / 1e3;
  return { ops, bytes, gpuMs, opsPerSecond: seconds > 0 ? ops / seconds : 0, gbPerSecond: seconds > 0 ? bytes / seconds / 1e9 : 0 };
}

/** Measures the three memory rooflines of this device, back to back in one submission. */
export async function measureRoofline(gpu: Gpu, options: RooflineOptions): Promise<Roofline> {
  const sizes = rooflineSizes(gpu);
  const words = sizes.bufferBytes / 4;
  const data = gpu.createBuffer(sizes.bufferBytes, 'bench.roofline.data');
  const copyDst = gpu.createBuffer(sizes.bufferBytes / 2, 'bench.roofline.copy-dst');
  const sink = gpu.createBuffer(16, 'bench.roofline.sink');
  try {
    const init = gpu.device.createCommandEncoder({ label: 'bench.roofline.fill' });
    const fillParams = gpu.uniforms(new Uint32Array([words, 0, 0, 0]));
    gpu.encodeDispatch(init, fillKernel, { bindings: [fillParams, data], invocations: words, maxWorkgroups: 65_535 });
    gpu.pool.release(fillParams);
    gpu.submit([init.finish()]);

    const g4 = gpu.uniforms(new Uint32Array([sizes.gathers, words - 1, 0x2545f491, 0x9e3779b9]));
    const g128 = gpu.uniforms(new Uint32Array([sizes.lines * 8, sizes.bufferBytes / 128 - 1, 0x6b43a9b5, 0x9e3779b9]));
    const cp = gpu.uniforms(new Uint32Array([sizes.copyVectors, 0, 0, 0]));
    const copySrc = { buffer: data, offset: 0, size: sizes.bufferBytes / 2 };
    const times = await timeReps(
      gpu,
      (encoder, time) => {
        gpu.encodeDispatch(encoder, gather4Kernel, { bindings: [g4, data, sink], invocations: sizes.gathers }, time('gather4'));
        gpu.encodeDispatch(encoder, gather128Kernel, { bindings: [g128, data, sink], invocations: sizes.lines * 8 }, time('gather128'));
        gpu.encodeDispatch(encoder, copyKernel, { bindings: [cp, copySrc, copyDst], invocations: sizes.copyVectors }, time('copy'));
      },
      { ...options, label: 'bench.roofline' },
    );
    for (const b of [g4, g128, cp]) gpu.pool.release(b);
    return {
      bufferBytes: sizes.bufferBytes,
      gather4: result(sizes.gathers, sizes.gathers * 4, samplesOf(times, 'gather4')),
      gather128: result(sizes.lines, sizes.lines * 128, samplesOf(times, 'gather128')),
      copy: result(sizes.copyVectors, sizes.copyVectors * 32, samplesOf(times, 'copy')),
    };
  } finally {
    data.destroy();
    copyDst.destroy();
    sink.destroy();
  }
}
