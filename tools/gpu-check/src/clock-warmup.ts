import type { Gpu, Kernel } from '@gpuhash/core';
import { composeWgsl, fmix32Module } from '@gpuhash/kernels';

const spin: Kernel = {
  name: 'gpu-check.clock-warmup',
  workgroupSize: 256,
  source: composeWgsl(
    /* wgsl */ `
@group(0) @binding(0) var<uniform> rounds: vec4<u32>;
@group(0) @binding(1) var<storage, read_write> sink: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  var x = gid.x;
  for (var i = 0u; i < rounds.x; i++) { x = hash_fmix32(x + i); }
  if (x == rounds.y) { sink[0] = x; }
}`,
    { modules: [fmix32Module] },
  ),
};

/**
 * About half a second of arithmetic to encode before every timed step, in its submission: after
 * the host-side gaps between steps (readbacks, checks, clears) the GPU's clock drops, and steps
 * measured right after ran 2-3x slow (H200 and H100). 100 ms was not always enough: the SM clock
 * can take up to half a second of work to come back (the bench's warm-up, apps/bench/README.md).
 * A handful of rounds on a software adapter.
 */
export function clockWarmup(gpu: Gpu): (encoder: GPUCommandEncoder) => void {
  const rounds = gpu.uniforms(new Uint32Array([gpu.isSoftware ? 10 : 1_000_000, 0x9e3779b9, 0, 0]));
  const sink = gpu.createBuffer(16, 'gpu-check.clock-warmup');
  return (encoder) => gpu.encodeDispatch(encoder, spin, { bindings: [rounds, sink], invocations: 132 * 2048 });
}
