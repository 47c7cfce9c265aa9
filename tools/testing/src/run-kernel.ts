import type { Gpu, Kernel } from '@gpuhash/core';

export interface KernelRun {
  kernel: Kernel;
  /** Host arrays bound in order as @binding(0..): each becomes a storage buffer (or a uniform buffer when listed in `uniforms`). */
  inputs: ReadonlyArray<Uint32Array | Int32Array | Float32Array>;
  /** Indices of `inputs` to bind as uniform buffers instead of storage buffers. */
  uniforms?: readonly number[];
  /** Invocations to launch. */
  invocations: number;
  maxWorkgroups?: number;
}

/**
 * Runs a kernel once over host arrays and returns every binding's contents afterwards (uniform
 * bindings are returned as given). The way WGSL helpers are checked against their CPU twins.
 */
export async function runKernelOnArrays(gpu: Gpu, run: KernelRun): Promise<Uint32Array[]> {
  return gpu.run(run.kernel.name, async () => {
    const uniformSet = new Set(run.uniforms ?? []);
    const buffers = run.inputs.map((data, i) => {
      if (uniformSet.has(i)) return gpu.uniforms(data);
      const array = gpu.upload(data, `${run.kernel.name}#${i}`);
      return array.buffer;
    });
    gpu.dispatch(run.kernel, { bindings: buffers, invocations: run.invocations, maxWorkgroups: run.maxWorkgroups });
    const out: Uint32Array[] = [];
    for (let i = 0; i < buffers.length; i++) {
      const data = run.inputs[i] as Uint32Array;
      const buffer = buffers[i] as GPUBuffer;
      if (uniformSet.has(i)) {
        out.push(new Uint32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)));
        gpu.pool.release(buffer);
      } else {
        out.push(new Uint32Array(await gpu.readBytes(buffer, 0, data.byteLength)));
        buffer.destroy();
      }
    }
    return out;
  });
}
