import { createRng, expectSameArrays, testGpu } from '@gpuhash/testing';
import { describe, expect, it } from 'vitest';
import { dispatchGrid, encodeTimedSpan, timestampEnds } from '../src';

describe('requestGpu', () => {
  it('returns a usable device with its limits and features described', async () => {
    const gpu = await testGpu();
    expect(gpu.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 << 20);
    expect(gpu.describe()).toMatch(/subgroups|no subgroups/);
    if (gpu.subgroups.supported) {
      expect(gpu.subgroups.minSize).toBeGreaterThanOrEqual(1);
      expect(gpu.subgroups.maxSize).toBeGreaterThanOrEqual(gpu.subgroups.minSize);
    }
  });
});

describe('bindingElements', () => {
  it('is the largest power of two of elements whose bytes one binding holds', async () => {
    const gpu = await testGpu();
    const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
    for (const bytes of [1, 4, 8, 12, 16, 256]) {
      const n = gpu.bindingElements(bytes);
      expect(Number.isInteger(Math.log2(n)), `${bytes}-byte elements: ${n}`).toBe(true);
      expect(n * bytes).toBeLessThanOrEqual(limit);
      expect(2 * n * bytes).toBeGreaterThan(limit);
    }
  });
});

describe('upload, download and fill', () => {
  it('round-trips random arrays of every element type', async () => {
    const gpu = await testGpu();
    const rng = createRng(11);
    for (const length of [0, 1, 3, 1000, 65_537]) {
      const u = rng.u32Array(length);
      const i = new Int32Array(u.buffer.slice(0));
      const f = new Float32Array(length).map(() => rng.u32() / 7);
      for (const host of [u, i, f]) {
        const arr = gpu.upload(host);
        const back = await gpu.download(arr);
        expect(back.constructor).toBe(host.constructor);
        expectSameArrays(`round trip ${arr.type}[${length}]`, back, host);
        arr.destroy();
      }
    }
  });

  it('fills a range with a value on the GPU, leaving the rest alone', async () => {
    const gpu = await testGpu();
    const rng = createRng(12);
    const host = rng.u32Array(300_000);
    const arr = gpu.upload(host);
    const start = 1234;
    const count = 250_000;
    const enc = gpu.device.createCommandEncoder();
    gpu.encodeFill(enc, arr.buffer, 0xdeadbeef, count, start * 4);
    gpu.submit([enc.finish()]);
    const back = await gpu.download(arr);
    const expected = host.slice();
    expected.fill(0xdeadbeef, start, start + count);
    expectSameArrays('fill', back, expected);
    arr.destroy();
  });
});

describe('dispatchGrid', () => {
  it('never exceeds the per-dimension limit and covers every invocation', () => {
    const rng = createRng(13);
    for (let t = 0; t < 2000; t++) {
      const inv = rng.below(2 ** 31);
      const wg = [1, 32, 64, 128, 256][rng.below(5)] as number;
      const g = dispatchGrid(inv, wg, 65_535);
      expect(g.x).toBeLessThanOrEqual(65_535);
      expect(g.y).toBeLessThanOrEqual(65_535);
      expect(g.x * g.y * wg).toBeGreaterThanOrEqual(Math.min(inv, 65_535 * 65_535 * wg));
      // No more than one partly idle row of workgroups beyond what is needed.
      expect(g.x * (g.y - 1) * wg).toBeLessThan(Math.max(inv, 1));
    }
  });
});

describe('timestampEnds', () => {
  it('splits one timing into a first pass that writes only the beginning and a last that writes only the end', () => {
    const rng = createRng(29);
    const querySet = {} as GPUQuerySet;
    for (let t = 0; t < 100; t++) {
      const begin = rng.below(4096);
      const end = rng.below(4096);
      const { first, last } = timestampEnds({ querySet, beginningOfPassWriteIndex: begin, endOfPassWriteIndex: end });
      expect(first).toEqual({ querySet, beginningOfPassWriteIndex: begin, endOfPassWriteIndex: undefined });
      expect(last).toEqual({ querySet, beginningOfPassWriteIndex: undefined, endOfPassWriteIndex: end });
    }
    expect(timestampEnds(undefined)).toEqual({});
  });
});

describe('encodeTimedSpan', () => {
  /** An encoder that records each compute pass's timestampWrites, in order. */
  function recordingEncoder() {
    const passes: (GPUComputePassTimestampWrites | undefined)[] = [];
    const encoder = {
      beginComputePass: (d?: GPUComputePassDescriptor) => {
        passes.push(d?.timestampWrites);
        return { end: () => {} };
      },
    } as unknown as GPUCommandEncoder;
    return { encoder, passes };
  }

  it("brackets the body's passes with a pass writing the beginning timestamp and one writing the end", () => {
    const rng = createRng(31);
    const querySet = {} as GPUQuerySet;
    for (let t = 0; t < 50; t++) {
      const begin = rng.below(4096);
      const end = rng.below(4096);
      const bodyPasses = rng.below(5);
      const { encoder, passes } = recordingEncoder();
      encodeTimedSpan(encoder, { querySet, beginningOfPassWriteIndex: begin, endOfPassWriteIndex: end }, () => {
        for (let p = 0; p < bodyPasses; p++) encoder.beginComputePass().end();
      });
      expect(passes.length).toBe(bodyPasses + 2);
      expect(passes[0]).toEqual({ querySet, beginningOfPassWriteIndex: begin, endOfPassWriteIndex: undefined });
      expect(passes.slice(1, -1)).toEqual(Array(bodyPasses).fill(undefined));
      expect(passes.at(-1)).toEqual({ querySet, beginningOfPassWriteIndex: undefined, endOfPassWriteIndex: end });

      const plain = recordingEncoder();
      encodeTimedSpan(plain.encoder, undefined, () => {
        for (let p = 0; p < bodyPasses; p++) plain.encoder.beginComputePass().end();
      });
      expect(plain.passes).toEqual(Array(bodyPasses).fill(undefined));
    }
  });
});
