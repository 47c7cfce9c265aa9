import { testGpu } from '@gpuhash/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeWindowOrder, ORDER_CHUNK_MIN, ORDER_WORKGROUPS, ordersByWindow, ScratchArena, windowOrderKernels } from '../src';

/** A table whose entry i lies in window keys[i] % windows (a stand-in for a home's window). */
const kernels = windowOrderKernels('test', { n: 'u32' }, { windows: 2 }, (v) => ({
  code: `fn window_of(i: u32) -> u32 { return keys[i] % ${v.windows}u; }`,
  modules: [],
}));

/**
 * The CPU model: chunks of the batch as the passes cut it (one per workgroup), then the list
 * window-major, chunk by chunk, each (window, chunk) run holding its entries in some order.
 */
function modelRuns(keys: Uint32Array, windows: number): number[][] {
  const n = keys.length;
  const chunks = Math.min(ORDER_WORKGROUPS, Math.ceil(n / ORDER_CHUNK_MIN));
  const per = Math.ceil(n / chunks);
  const runs: number[][] = [];
  for (let w = 0; w < windows; w++)
    for (let c = 0; c < chunks; c++) {
      const run: number[] = [];
      for (let i = c * per; i < Math.min(n, (c + 1) * per); i++) if ((keys[i] as number) % windows === w) run.push(i);
      runs.push(run);
    }
  return runs;
}

describe('window order', () => {
  it('lists every batch index once, window by window and chunk by chunk, with positions its inverse', async () => {
    const gpu = await testGpu();
    const scratch = new ScratchArena(gpu, 'test.window-order');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 9000 }),
        fc.integer({ min: 2, max: 9 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        async (n, windows, seed) => {
          let x = seed >>> 0;
          const keys = Uint32Array.from({ length: n }, () => {
            x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
            return x >>> 7;
          });
          const keysArray = gpu.upload(keys);
          const encoder = gpu.device.createCommandEncoder();
          const count = kernels.count.variant({ windows });
          const scatter = kernels.scatter.variant({ windows });
          const { order, positions } = encodeWindowOrder(gpu, encoder, n, windows, scratch, (p, options) => {
            const buffers = { keys: keysArray.buffer, ...p.buffers };
            const kernel = p.pass === 'count' ? count : scatter;
            kernel.encode(gpu, encoder, { buffers: buffers as never, params: { n }, ...options });
          });
          gpu.submit([encoder.finish()]);
          const listed = new Uint32Array(await gpu.readBytes(order, 0, n * 4));
          const at = new Uint32Array(await gpu.readBytes(positions, 0, n * 4));
          keysArray.destroy();
          let from = 0;
          for (const run of modelRuns(keys, windows)) {
            const got = [...listed.subarray(from, from + run.length)].sort((a, b) => a - b);
            expect(got).toEqual(run);
            from += run.length;
          }
          for (let j = 0; j < n; j++) expect(at[listed[j] as number]).toBe(j);
        },
      ),
      { numRuns: 12, seed: 97 },
    );
    scratch.destroy();
  });

  it('takes window order only past two windows of bytes and for batches of 2^16 or more, unless forced', () => {
    expect(ordersByWindow('auto', 4, 2 ** 16, 2 ** 31 + 1)).toBe(true);
    expect(ordersByWindow('auto', 4, 2 ** 16 - 1, 2 ** 33)).toBe(false);
    expect(ordersByWindow('auto', 2, 2 ** 20, 2 ** 31)).toBe(false);
    expect(ordersByWindow('always', 2, 1, 64)).toBe(true);
    expect(ordersByWindow('always', 1, 1, 64)).toBe(false);
    expect(ordersByWindow('never', 8, 2 ** 20, 2 ** 33)).toBe(false);
    expect(ordersByWindow('always', 8, 0, 2 ** 33)).toBe(false);
  });
});
