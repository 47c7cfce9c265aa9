import type { Gpu } from '@gpuhash/core';

/** What a create run by createOutOfMemory left behind. */
export interface OutOfMemoryCreate {
  /** What the create threw (undefined when it resolved). */
  error: unknown;
  /** Buffers the device created meanwhile. */
  allocated: number;
  /** Labels of those still allocated once the Gpu's pool of reusable scratch is emptied. */
  kept: string[];
}

/**
 * Runs `create` (a table's or cache's create, alone on `gpu`) while the device reports, in the
 * out-of-memory scope of its first operation, that it ran out of memory (Gpu.run pops its
 * validation scope, then that one), and tracks every buffer created meanwhile. A resolved create is
 * destroyed. Use a Gpu of the check's own: its pool is emptied.
 */
export async function createOutOfMemory(gpu: Gpu, create: () => Promise<{ destroy(): void }>): Promise<OutOfMemoryCreate> {
  const device = gpu.device as GPUDevice & Record<string, unknown>;
  const createBuffer = gpu.device.createBuffer.bind(gpu.device);
  const popErrorScope = gpu.device.popErrorScope.bind(gpu.device);
  const created: GPUBuffer[] = [];
  const destroyed = new Set<GPUBuffer>();
  let pops = 0;
  device.createBuffer = (descriptor: GPUBufferDescriptor) => {
    const buffer = createBuffer(descriptor);
    created.push(buffer);
    const destroy = buffer.destroy.bind(buffer);
    (buffer as GPUBuffer & Record<string, unknown>).destroy = () => {
      destroyed.add(buffer);
      destroy();
    };
    return buffer;
  };
  device.popErrorScope = async () => {
    const error = await popErrorScope();
    pops++;
    return pops === 2 ? ({ message: 'simulated: out of device memory' } as GPUError) : error;
  };
  let error: unknown;
  try {
    (await create()).destroy();
  } catch (e) {
    error = e;
  } finally {
    // Own properties shadowed the device's methods: removing them restores those.
    Reflect.deleteProperty(device, 'createBuffer');
    Reflect.deleteProperty(device, 'popErrorScope');
  }
  // Scratch the Gpu's pool keeps for reuse is not the create's: emptied before counting.
  gpu.pool.clear();
  return { error, allocated: created.length, kept: created.filter((b) => !destroyed.has(b)).map((b) => b.label) };
}
