import { testGpu } from '@gpuhash/testing';
import { describe, expect, it } from 'vitest';
import {
  BufferUsage,
  DestroyedError,
  DeviceLostError,
  fromDevice,
  GpuUnavailableError,
  GpuValidationError,
  type Kernel,
  LimitExceededError,
  requestGpu,
} from '../src';

const quiet = { log: () => {} };

const copyKernel: Kernel = {
  name: 'test.copy',
  workgroupSize: 64,
  source: /* wgsl */ `
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&dst)) { dst[id.x] = src[id.x] + 1u; }
}`,
};

describe('software fallback', () => {
  it('is refused with allowSoftware: false when only software is present', async () => {
    const shared = await testGpu();
    const attempt = requestGpu({ ...quiet, allowSoftware: false });
    if (shared.isSoftware) {
      await expect(attempt).rejects.toBeInstanceOf(GpuUnavailableError);
      await expect(requestGpu({ ...quiet, allowSoftware: false })).rejects.toThrow(/allowSoftware is false.*apt-get install/);
    } else {
      const gpu = await attempt;
      expect(gpu.isSoftware).toBe(false);
      gpu.destroy();
    }
  });
});

describe('limits', () => {
  it('rejects a buffer over maxBufferSize before WebGPU sees it', async () => {
    const gpu = await testGpu();
    const max = gpu.limits.maxBufferSize;
    const error = (() => {
      try {
        gpu.createBuffer(max + 4, 'huge table');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(LimitExceededError);
    expect((error as LimitExceededError).limit).toBe('maxBufferSize');
    expect((error as LimitExceededError).requested).toBe(max + 4);
    expect(String((error as Error).message)).toContain('huge table');
  });

  it('rejects a storage binding over maxStorageBufferBindingSize', async () => {
    const gpu = await testGpu();
    const binding = gpu.limits.maxStorageBufferBindingSize;
    expect(() => gpu.createBuffer(binding + 4, 'slots')).toThrow(LimitExceededError);
    if (binding + 4 <= gpu.limits.maxBufferSize) {
      expect(() => gpu.createBuffer(binding + 4, 'slots')).toThrow(/maxStorageBufferBindingSize/);
    }
  });
});

describe('validation errors', () => {
  it('become GpuValidationError naming the operation', async () => {
    const gpu = await testGpu();
    const notStorage = gpu.device.createBuffer({ size: 256, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST });
    const dst = gpu.createArray('u32', 64);
    await expect(
      gpu.run('bad bind', async () => {
        gpu.dispatch(copyKernel, { bindings: [notStorage, dst.buffer], invocations: 64 });
      }),
    ).rejects.toSatisfy((e: unknown) => e instanceof GpuValidationError && e.operation === 'bad bind');
    // The Gpu stays usable after a validation error.
    const src = gpu.upload(new Uint32Array([1, 2, 3]));
    const out = gpu.createArray('u32', 3);
    await gpu.run('good', async () => gpu.dispatch(copyKernel, { bindings: [src.buffer, out.buffer], invocations: 3 }));
    expect([...(await gpu.download(out))]).toEqual([2, 3, 4]);
    notStorage.destroy();
  });
});

describe('destroy', () => {
  it('makes every later use throw DestroyedError', async () => {
    const gpu = await requestGpu(quiet);
    const arr = gpu.upload(new Uint32Array([1, 2, 3]));
    gpu.destroy();
    expect(gpu.isDestroyed).toBe(true);
    expect(() => gpu.upload(new Uint32Array(4))).toThrow(DestroyedError);
    await expect(gpu.download(arr)).rejects.toBeInstanceOf(DestroyedError);
    await expect(gpu.run('after destroy', async () => 1)).rejects.toBeInstanceOf(DestroyedError);
    arr.destroy();
    expect(() => arr.buffer).toThrow(DestroyedError);
  });

  it('leaves a caller-provided device alive', async () => {
    const owner = await requestGpu(quiet);
    const wrapped = fromDevice(owner.device);
    expect(wrapped.subgroups.supported).toBe(owner.subgroups.supported);
    wrapped.destroy();
    const arr = owner.upload(new Uint32Array([7, 8]));
    expect([...(await owner.download(arr))]).toEqual([7, 8]);
    owner.destroy();
  });
});

describe('device loss', () => {
  it('rejects pending work with DeviceLostError and evicts caches', async () => {
    const gpu = await requestGpu(quiet);
    const seen: DeviceLostError[] = [];
    gpu.onLost((e) => seen.push(e));
    const src = gpu.upload(new Uint32Array(1 << 16).fill(5));
    const dst = gpu.createArray('u32', 1 << 16);
    gpu.dispatch(copyKernel, { bindings: [src.buffer, dst.buffer], invocations: 1 << 16 });
    expect(gpu.pipelines.size).toBe(1);
    const pending = gpu.download(dst);
    gpu.device.destroy();
    await expect(pending).rejects.toBeInstanceOf(DeviceLostError);
    await expect(gpu.finish()).rejects.toBeInstanceOf(DeviceLostError);
    expect(() => gpu.upload(new Uint32Array(4))).toThrow(DeviceLostError);
    expect(gpu.isLost).toBe(true);
    expect(gpu.pipelines.size).toBe(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.reason).toBe('destroyed');
  });
});
