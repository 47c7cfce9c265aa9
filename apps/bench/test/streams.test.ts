import type { Gpu } from '@gpuhash/core';
import { testGpu } from '@gpuhash/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeGenerateMixed, type MixedBatch } from '../src/gpu/mixed';
import { encodeGenerate, type StreamSpec, verifyFind } from '../src/gpu/streams';
import { BENCH_RESERVED, benchIndex, benchKey, benchMiss, benchValue, fmix32Inverse } from '../src/keys';
import { BenchOp } from '../src/tables/types';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await testGpu();
});

async function generate(spec: StreamSpec): Promise<{ keys: Uint32Array; values: Uint32Array }> {
  const keys = gpu.createBuffer(4 * spec.n, 'test.keys');
  const values = gpu.createBuffer(4 * spec.n, 'test.values');
  const encoder = gpu.device.createCommandEncoder();
  encodeGenerate(gpu, encoder, spec, keys, values);
  gpu.submit([encoder.finish()]);
  const result = {
    keys: new Uint32Array(await gpu.readBytes(keys, 0, 4 * spec.n)),
    values: new Uint32Array(await gpu.readBytes(values, 0, 4 * spec.n)),
  };
  keys.destroy();
  values.destroy();
  return result;
}

/** The stream index of a key and whether it is a hit key. */
const indexOf = benchIndex;

describe('GPU key streams', () => {
  it('match their CPU twins', async () => {
    const hits = await generate({ n: 1000, start: 77 });
    const misses = await generate({ n: 1000, start: 5, miss: true });
    for (let i = 0; i < 1000; i++) {
      expect(hits.keys[i]).toBe(benchKey(77 + i));
      expect(hits.values[i]).toBe(benchValue(77 + i));
      expect(misses.keys[i]).toBe(benchMiss(5 + i));
    }
  });

  it('match their CPU twins where a plain image would be reserved, and the GPU check maps the replacements back', async () => {
    for (const r of BENCH_RESERVED) {
      const x = fmix32Inverse(r);
      const miss = x % 2 === 0;
      const start = (miss ? ((x - 2) >>> 0) / 2 : (x - 1) / 2) - 8;
      const n = 16;
      const { keys } = await generate({ n, start, miss });
      for (let i = 0; i < n; i++) expect(keys[i]).toBe(miss ? benchMiss(start + i) : benchKey(start + i));
      expect([...keys].some((k) => BENCH_RESERVED.includes(k))).toBe(false);
      // Answers as a table holding hits start .. start + n - 1 would give them: the check finds none wrong.
      const values = new Uint32Array(n);
      const found = new Uint32Array(n);
      for (let i = 0; i < n; i++) {
        values[i] = miss ? 0 : benchValue(start + i);
        found[i] = miss ? 0 : 1;
      }
      const buffers = [keys, values, found].map((a) => gpu.upload(a));
      const verdict = await verifyFind(
        gpu,
        { n, foundFrom: start, foundTo: start + n },
        ...(buffers.map((b) => b.buffer) as [GPUBuffer, GPUBuffer, GPUBuffer]),
      );
      for (const b of buffers) b.destroy();
      expect(verdict, `${miss ? 'misses' : 'hits'} from ${start}`).toEqual({ wrong: 0, firstWrong: -1 });
    }
  });

  it('draw Zipf queries from the inserted keys, hottest first', async () => {
    const n = 1 << 14;
    const { keys, values } = await generate({ n, start: 0, zipf: { s: 0.99, range: 4096, seed: 42 } });
    const counts = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const { hit, j } = indexOf(keys[i] as number);
      expect(hit).toBe(true);
      expect(j).toBeLessThan(4096);
      expect(values[i]).toBe(benchValue(j));
      counts.set(j, (counts.get(j) ?? 0) + 1);
    }
    // Continuous Zipf(0.99) on [1, 4097): rank 0 takes (2^0.01 - 1) / (4097^0.01 - 1) = 7.8% of draws.
    const hottest = (counts.get(0) ?? 0) / n;
    expect(hottest).toBeGreaterThan(0.06);
    expect(hottest).toBeLessThan(0.1);
    expect(counts.get(0) ?? 0).toBeGreaterThan(counts.get(100) ?? 0);
    expect(counts.size).toBeLessThan(4096);
  });

  it('write mixed batches with exact op counts in disjoint key ranges', async () => {
    const batch: MixedBatch = {
      inserts: 500,
      insertStart: 10_000,
      erases: 200,
      eraseStart: 0,
      hits: 301,
      hitStart: 200,
      misses: 7,
      missStart: 0,
      seed: 9,
    };
    const n = 1008;
    const [ops, keys, values] = [0, 1, 2].map(() => gpu.createBuffer(4 * n, 'test.mixed'));
    const encoder = gpu.device.createCommandEncoder();
    encodeGenerateMixed(gpu, encoder, batch, ops as GPUBuffer, keys as GPUBuffer, values as GPUBuffer);
    gpu.submit([encoder.finish()]);
    const read = async (b: GPUBuffer | undefined) => new Uint32Array(await gpu.readBytes(b as GPUBuffer, 0, 4 * n));
    const [o, k, v] = [await read(ops), await read(keys), await read(values)];
    for (const b of [ops, keys, values]) b?.destroy();
    const seen = { insert: new Set<number>(), erase: new Set<number>(), hit: new Set<number>(), miss: new Set<number>() };
    for (let i = 0; i < n; i++) {
      const { hit, j } = indexOf(k[i] as number);
      if (o[i] === BenchOp.insert) {
        expect(hit && j >= 10_000 && j < 10_500).toBe(true);
        expect(v[i]).toBe(benchValue(j));
        seen.insert.add(j);
      } else if (o[i] === BenchOp.erase) {
        expect(hit && j < 200).toBe(true);
        seen.erase.add(j);
      } else {
        expect(o[i]).toBe(BenchOp.find);
        if (hit) {
          expect(j >= 200 && j < 501).toBe(true);
          seen.hit.add(j);
        } else seen.miss.add(j);
      }
    }
    expect([seen.insert.size, seen.erase.size, seen.hit.size, seen.miss.size]).toEqual([500, 200, 301, 7]);
    // Shuffled: the first 32 ops are not all of one kind.
    expect(new Set(o.subarray(0, 32)).size).toBeGreaterThan(1);
  });
});
