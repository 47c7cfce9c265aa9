import type { Gpu, Kernel } from '@gpuhash/core';
import { composeWgsl, fmix32, fmix32Module, gridModule, jenkins, jenkinsModule, xxhash32, xxhash32Module } from '@gpuhash/kernels';

/** Hash functions the kernels guide lets you run on the GPU next to their CPU twins. */
export const TWIN_HASHES = {
  fmix32: { module: fmix32Module, call: 'hash_fmix32(k)', cpu: fmix32 },
  jenkins: { module: jenkinsModule, call: 'hash_jenkins(k)', cpu: jenkins },
  xxhash32: { module: xxhash32Module, call: 'hash_xxhash32(k, 0u)', cpu: (k: number) => xxhash32(k, 0) },
} as const;

export type TwinHash = keyof typeof TWIN_HASHES;

const kernels = new Map<TwinHash, Kernel>();

/** A kernel composed from the toolkit: the grid-stride loop plus one hash module. */
function hashKernel(name: TwinHash): Kernel {
  let kernel = kernels.get(name);
  if (!kernel) {
    const { module, call } = TWIN_HASHES[name];
    const source = composeWgsl(
      /* wgsl */ `
struct Params { n: u32, _a: u32, _b: u32, _c: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> hashes: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = grid_thread(wid, nwg, lid, 256u); i < params.n; i += grid_threads(nwg, 256u)) {
    let k = keys[i];
    hashes[i] = ${call};
  }
}`,
      { modules: [gridModule, module] },
    );
    kernel = { name: `docs.twin.${name}`, source, workgroupSize: 256 };
    kernels.set(name, kernel);
  }
  return kernel;
}

export interface TwinResult {
  keys: Uint32Array;
  gpu: Uint32Array;
  cpu: Uint32Array;
  /** Keys whose GPU and CPU hashes differ. */
  mismatches: number;
}

/** Hashes `n` keys (0, 1, 2, ...) on the GPU and on the CPU, and compares them bit for bit. */
export async function compareTwins(gpu: Gpu, name: TwinHash, n: number): Promise<TwinResult> {
  const keys = Uint32Array.from({ length: n }, (_, i) => i);
  const hashed = await gpu.run(`docs.twin.${name}`, async () => {
    const input = gpu.upload(keys);
    const output = gpu.createArray('u32', n);
    const params = gpu.uniforms(new Uint32Array([n, 0, 0, 0]));
    const encoder = gpu.device.createCommandEncoder();
    gpu.encodeDispatch(encoder, hashKernel(name), { bindings: [params, input.buffer, output.buffer], invocations: n });
    gpu.submit([encoder.finish()]);
    gpu.pool.release(params);
    const result = await gpu.download(output);
    input.destroy();
    output.destroy();
    return result as Uint32Array;
  });
  const cpu = keys.map((k) => TWIN_HASHES[name].cpu(k));
  let mismatches = 0;
  for (let i = 0; i < n; i++) if (hashed[i] !== cpu[i]) mismatches++;
  return { keys, gpu: hashed, cpu, mismatches };
}
