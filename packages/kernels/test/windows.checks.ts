import type { Kernel } from '@gpuhash/core';
import { type CheckSuite, defineChecks, expectSameArrays, type GpuCheck, type Rng, runKernelOnArrays } from '@gpuhash/testing';
import { composeWgsl } from '../src/compose';
import { gridModule } from '../src/grid';
import { type StorageWindows, windowNames } from '../src/windows';

const WG = 64;

/**
 * Three arrays reached through window accessors: `data` (atomic, 3 windows: a CAS loop, a load
 * and a store per invocation on a distinct element), `pairs` (plain vec2, 3 windows: a read and a
 * write per distinct element) and `counts` (atomic, 2 windows: atomicAdd and atomicOr on colliding
 * elements, sums on even ones and bit sets on odd ones). Indices are nested accesses of an unwindowed array, as in the tables' kernels.
 */
function windowsKernel(elementsLog2: number): { kernel: Kernel; windows: StorageWindows[] } {
  const windows: StorageWindows[] = [
    { name: 'data', element: 'atomic<u32>', count: 3, elementsLog2 },
    { name: 'pairs', element: 'vec2<u32>', count: 3, elementsLog2 },
    { name: 'counts', element: 'atomic<u32>', count: 2, elementsLog2 },
  ];
  let binding = 1;
  const decl = (w: StorageWindows) =>
    windowNames(w.name, w.count)
      .map((n) => `@group(0) @binding(${binding++}) var<storage, read_write> ${n}: array<${w.element}>;`)
      .join('\n');
  const decls = windows.map(decl).join('\n');
  const main = /* wgsl */ `
struct Params { n: u32, _a: u32, _b: u32, _c: u32 }
@group(0) @binding(0) var<uniform> params: Params;
${decls}
// idx[i]: a distinct element of data and pairs; idx[n + i]: an element of counts (may repeat).
@group(0) @binding(${binding++}) var<storage, read> idx: array<u32>;
@group(0) @binding(${binding++}) var<storage, read> vals: array<u32>;
@group(0) @binding(${binding++}) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = grid_thread(wid, nwg, lid, ${WG}u);
  if (i >= params.n) { return; }
  // A weak CAS may fail spuriously: retry while the word still holds what was read.
  var seen = atomicLoad(&data[idx[i]]);
  loop {
    let r = atomicCompareExchangeWeak(&data[idx[i]], seen, vals[i]);
    if (r.exchanged) { break; }
    seen = r.old_value;
  }
  out[i] = seen;
  atomicStore(&data[idx[i]], atomicLoad(&data[idx[i]]) ^ 0x5a5a5a5au);
  let p = pairs[idx[i]];
  pairs[idx[i]] = vec2<u32>(p.y, p.x + vals[i]);
  // Sums on even elements, bit sets on odd ones: either order of the lanes gives one result.
  atomicAdd(&counts[idx[params.n + i] & ~1u], vals[i] & 0xffffu);
  atomicOr(&counts[idx[params.n + i] | 1u], 1u << (i & 31u));
}
`;
  return {
    windows,
    kernel: { name: `test.windows.${elementsLog2}`, workgroupSize: WG, source: composeWgsl(main, { modules: [gridModule], windows }) },
  };
}

function shuffledIndices(rng: Rng, total: number, n: number): Uint32Array {
  const all = Uint32Array.from({ length: total }, (_, k) => k);
  for (let k = total - 1; k > 0; k--) {
    const j = rng.below(k + 1);
    [all[k], all[j]] = [all[j] as number, all[k] as number];
  }
  return all.slice(0, n);
}

/** Concatenated windows of `count` windows of 2^log2 elements of `lanes` words each, random. */
function randomWindows(rng: Rng, count: number, log2: number, lanes: number): Uint32Array[] {
  return Array.from({ length: count }, () => Uint32Array.from({ length: lanes << log2 }, () => rng.u32()));
}

const accessors: GpuCheck = {
  name: 'window accessors read and write the element the unsplit index names',
  async run({ gpu, rng, scale }) {
    for (const elementsLog2 of [0, 5, 10 + Math.log2(Math.max(1, Math.min(scale, 16)))]) {
      const { kernel } = windowsKernel(elementsLog2);
      const per = 2 ** elementsLog2;
      const n = Math.min(3 * per, 64 * scale);
      const data = randomWindows(rng, 3, elementsLog2, 1);
      const pairs = randomWindows(rng, 3, elementsLog2, 2);
      const counts = Array.from({ length: 2 }, () => new Uint32Array(per));
      const idx = new Uint32Array(2 * n);
      idx.set(shuffledIndices(rng, 3 * per, n));
      for (let i = 0; i < n; i++) idx[n + i] = rng.below(2 * per);
      const vals = Uint32Array.from({ length: n }, () => rng.u32());
      const params = new Uint32Array([n, 0, 0, 0]);
      const inputs = [params, ...data, ...pairs, ...counts, idx, vals, new Uint32Array(n)];
      const got = await runKernelOnArrays(gpu, { kernel, inputs, uniforms: [0], invocations: n });

      // The CPU model over the concatenated arrays.
      const flatData = Uint32Array.from(data.flatMap((w) => [...w]));
      const flatPairs = Uint32Array.from(pairs.flatMap((w) => [...w]));
      const flatCounts = new Uint32Array(2 * per);
      const out = new Uint32Array(n);
      for (let i = 0; i < n; i++) {
        const e = idx[i] as number;
        const v = vals[i] as number;
        out[i] = flatData[e] as number;
        flatData[e] = (v ^ 0x5a5a5a5a) >>> 0;
        const [x, y] = [flatPairs[2 * e] as number, flatPairs[2 * e + 1] as number];
        flatPairs[2 * e] = y;
        flatPairs[2 * e + 1] = (x + v) >>> 0;
        const c = idx[n + i] as number;
        flatCounts[c & ~1] = ((flatCounts[c & ~1] as number) + (v & 0xffff)) >>> 0;
        flatCounts[c | 1] = ((flatCounts[c | 1] as number) | (1 << (i & 31))) >>> 0;
      }
      const joined = (from: number, count: number) => Uint32Array.from(got.slice(from, from + count).flatMap((w) => [...w]));
      const where = `windows of 2^${elementsLog2} elements, ${n} invocations`;
      expectSameArrays(`data, ${where}`, joined(1, 3), flatData);
      expectSameArrays(`pairs, ${where}`, joined(4, 3), flatPairs);
      expectSameArrays(`counts, ${where}`, joined(7, 2), flatCounts);
      expectSameArrays(`CAS results, ${where}`, got[got.length - 1] as Uint32Array, out);
    }
  },
};

export const windowsChecks: CheckSuite = defineChecks('kernels/windows', [accessors]);
