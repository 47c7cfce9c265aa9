import { createRng, expectSameArrays, testGpu } from '@gpuhash/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BufferUsage, DeviceArray, InvalidArgumentError, type Kernel, STAGED_CHUNK_BYTES, STAGED_MIN_BYTES } from '../src';

const addKernel = (delta: number): Kernel => ({
  name: 'test.add',
  cacheKey: `delta=${delta}`,
  workgroupSize: 64,
  source: /* wgsl */ `
@group(0) @binding(0) var<uniform> n: vec4<u32>;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = (wid.y * nwg.x + wid.x) * 64u + lid; i < n.x; i += nwg.x * nwg.y * 64u) { data[i] += ${delta}u; }
}`,
});

describe('pipeline cache', () => {
  it('compiles a specialisation once and refuses a reused key with other WGSL', async () => {
    const gpu = await testGpu();
    const before = gpu.pipelines.misses;
    const a = gpu.pipeline(addKernel(3));
    expect(gpu.pipeline(addKernel(3))).toBe(a);
    expect(gpu.pipeline(addKernel(4))).not.toBe(a);
    expect(gpu.pipelines.misses - before).toBe(2);
    const clash = { ...addKernel(3), source: addKernel(5).source };
    expect(() => gpu.pipeline(clash)).toThrow(/different WGSL/);
  });

  it('one pipeline serves every size through uniforms, including grids folded past 65,535 workgroups', async () => {
    const gpu = await testGpu();
    const rng = createRng(21);
    const kernel = addKernel(9);
    for (const n of [1, 63, 64, 65, 100_000]) {
      const host = rng.u32Array(n);
      const arr = gpu.upload(host);
      const params = gpu.uniforms(new Uint32Array([n, 0, 0, 0]));
      // maxWorkgroups 3 forces a grid-stride loop over many items per invocation.
      gpu.dispatch(kernel, { bindings: [params, arr.buffer], invocations: n, maxWorkgroups: n > 1000 ? 3 : undefined });
      gpu.pool.release(params);
      expectSameArrays(
        `add n=${n}`,
        await gpu.download(arr),
        host.map((v) => (v + 9) >>> 0),
      );
      arr.destroy();
    }
  });

  it('an indirect dispatch takes its grid from a buffer, and a grid of 0 workgroups runs nothing', async () => {
    const gpu = await testGpu();
    const rng = createRng(22);
    const kernel = addKernel(5);
    const n = 5000;
    const host = rng.u32Array(n);
    const arr = gpu.upload(host);
    const params = gpu.uniforms(new Uint32Array([n, 0, 0, 0]));
    // Two grids: 2 workgroups (a grid-stride loop over all n), then 0.
    const args = gpu.createBuffer(24, 'test.indirect', BufferUsage.INDIRECT | BufferUsage.COPY_DST);
    gpu.write(args, new Uint32Array([2, 1, 1, 0, 1, 1]));
    const encoder = gpu.device.createCommandEncoder();
    for (const offset of [0, 12]) {
      gpu.encodeDispatch(encoder, kernel, { bindings: [params, arr.buffer], invocations: 0, indirect: { buffer: args, offset } });
    }
    gpu.submit([encoder.finish()]);
    gpu.pool.release(params);
    expectSameArrays(
      'indirect add',
      await gpu.download(arr),
      host.map((v) => (v + 5) >>> 0),
    );
    arr.destroy();
    args.destroy();
  });
});

describe('buffer pool', () => {
  it('recycles a released buffer only after the next submit', async () => {
    const gpu = await testGpu();
    const usage = BufferUsage.STORAGE | BufferUsage.COPY_DST;
    const a = gpu.pool.acquire(1000, usage);
    expect(a.size).toBe(1024);
    gpu.pool.release(a);
    const b = gpu.pool.acquire(1000, usage);
    expect(b).not.toBe(a);
    gpu.submit([]);
    const c = gpu.pool.acquire(700, usage);
    expect(c).toBe(a);
    gpu.pool.release(b);
    gpu.pool.release(c);
    gpu.submit([]);
  });
});

describe('staged uploads', () => {
  it('writeStaged puts every word where writeBuffer would, across chunk boundaries and at offsets', async () => {
    const gpu = await testGpu();
    const minWords = STAGED_MIN_BYTES / 4;
    const chunkWords = STAGED_CHUNK_BYTES / 4;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: minWords - 3, max: 2 * chunkWords + 5 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        async (words, offsetWords, seed) => {
          const rng = createRng(seed);
          const host = rng.u32Array(words);
          const target = gpu.createArray('u32', words + offsetWords + 7);
          try {
            await gpu.writeStaged(target.buffer, host, 4 * offsetWords);
            const back = await gpu.download(target);
            expectSameArrays('staged words', back.subarray(offsetWords, offsetWords + words), host);
            expect(back.subarray(0, offsetWords).every((x) => x === 0)).toBe(true);
            expect(back.subarray(offsetWords + words).every((x) => x === 0)).toBe(true);
          } finally {
            target.destroy();
          }
        },
      ),
      { numRuns: 4, seed: 11 },
    );
    const staged = await gpu.uploadStaged(new Float32Array([1.5, -2, 3]));
    expect([...(await gpu.download(staged))]).toEqual([1.5, -2, 3]);
    staged.destroy();
    const t = gpu.createArray('u32', 4);
    await expect(gpu.writeStaged(t.buffer, new Uint8Array(6))).rejects.toThrow(InvalidArgumentError);
    t.destroy();
  });
});

describe('device arrays', () => {
  it('wrap a caller buffer without owning it', async () => {
    const gpu = await testGpu();
    const buffer = gpu.createBuffer(64, 'caller');
    const view = DeviceArray.wrap(buffer, 16, 'u32');
    view.destroy();
    gpu.write(buffer, new Uint32Array([42]));
    expect((await gpu.readBytes(buffer, 0, 4)).byteLength).toBe(4);
    expect(() => DeviceArray.wrap(buffer, 17, 'u32')).toThrow(InvalidArgumentError);
    buffer.destroy();
  });
});

describe('GPU timing', () => {
  it('reports one duration per timed pass', async () => {
    const gpu = await testGpu();
    const timer = gpu.createTimer(4);
    const arr = gpu.upload(new Uint32Array(50_000));
    const params = gpu.uniforms(new Uint32Array([50_000, 0, 0, 0]));
    const encoder = gpu.device.createCommandEncoder();
    gpu.encodeDispatch(encoder, addKernel(1), { bindings: [params, arr.buffer], invocations: 50_000 }, timer.slot('first'));
    gpu.encodeDispatch(encoder, addKernel(1), { bindings: [params, arr.buffer], invocations: 50_000 }, timer.slot('second'));
    timer.resolve(encoder);
    gpu.submit([encoder.finish()]);
    timer.submitted();
    const result = await timer.read();
    if (gpu.hasTimestamps) {
      expect(result.source).toBe('timestamp');
      expect(result.passes.map((p) => p.label)).toEqual(['first', 'second']);
      for (const p of result.passes) expect(p.ms).toBeGreaterThanOrEqual(0);
    } else {
      expect(result.source).toBe('wall-clock');
    }
    expect(result.totalMs).toBeGreaterThanOrEqual(0);
    expect([...(await gpu.download(arr, 3))]).toEqual([2, 2, 2]);
    timer.destroy();
    arr.destroy();
  });
});
