import {
  composeWgsl,
  entryPoint,
  FAILURE_FLAGS,
  failureListModule,
  gridModule,
  gridStrideLoop,
  workgroupTalliesModule,
} from '@gpuhash/kernels';
import { createRng, expectSameArrays, testGpu } from '@gpuhash/testing';
import { describe, expect, it } from 'vitest';
import { defineKernel, FailureFlag, storage, uniform } from '../src';
import { fillKernel } from '../src/fill-kernel';

const WG = 64;

/** Refuses reserved keys into a failed list: params, one read binding, the failed list. */
const refuseReserved = defineKernel({
  name: 'test.refuse-reserved',
  workgroupSize: WG,
  params: { n: 'u32', reserved: 'u32' },
  bindings: { params: uniform(), keys: storage('read', 'u32'), failed: storage('read_write', 'atomic<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WG)} {
  ${gridStrideLoop('i', 'params.n', WG)} {
    if (keys[i] == params.reserved) { report_failure(i | FAILURE_RESERVED); }
  }
}`,
      { modules: [gridModule, failureListModule] },
    ),
});

/** Counts hits per workgroup into two counters; a variant constant picks what a hit is. */
const countHits = defineKernel({
  name: 'test.count-hits',
  workgroupSize: WG,
  variant: { odd: false },
  params: { n: 'u32', bias: 'i32', scale: 'f32' },
  bindings: { params: uniform(), keys: storage('read', 'vec2<u32>'), counters: storage('read_write', 'atomic<u32>') },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WG)} {
  ${gridStrideLoop('i', 'params.n', WG)} {
    let hit = (keys[i].x & 1u) == select(0u, 1u, ODD);
    count(select(T_MISSES, T_HITS, hit), 1u);
  }
  flush_tallies(lid);
}`,
      {
        modules: [
          gridModule,
          workgroupTalliesModule(
            'test.tallies',
            { hits: 'atomicAdd(&counters[0], v);', misses: 'atomicAdd(&counters[1], v);' },
            { needs: ['counters'] },
          ),
        ],
        constants: { ODD: v.odd },
      },
    ),
});

describe('composed WGSL of defined kernels', () => {
  it('core.fill', () => {
    expect(fillKernel.cacheKey).toBe('');
    expect(fillKernel.source).toMatchInlineSnapshot(`
      "// --- kernels.grid
      fn grid_workgroup(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.y * nwg.x + wid.x; }
      fn grid_thread(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, wg_size: u32) -> u32 { return grid_workgroup(wid, nwg) * wg_size + lid; }
      fn grid_threads(nwg: vec3<u32>, wg_size: u32) -> u32 { return nwg.x * nwg.y * wg_size; }

      struct Params { n: u32, value: u32, base: u32 }
      @group(0) @binding(0) var<uniform> params: Params;
      @group(0) @binding(1) var<storage, read_write> data: array<u32>;

      @compute @workgroup_size(256)
      fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
        for (var i = grid_thread(wid, nwg, lid, 256u); i < params.n; i += grid_threads(nwg, 256u)) {
          data[params.base + i] = params.value;
        }
      }
      "
    `);
  });

  it('a kernel appending to a failed list', () => {
    expect(refuseReserved.variant().source).toMatchInlineSnapshot(`
      "// --- kernels.grid
      fn grid_workgroup(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.y * nwg.x + wid.x; }
      fn grid_thread(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, wg_size: u32) -> u32 { return grid_workgroup(wid, nwg) * wg_size + lid; }
      fn grid_threads(nwg: vec3<u32>, wg_size: u32) -> u32 { return nwg.x * nwg.y * wg_size; }

      // --- kernels.failure-list
      const FAILURE_RESERVED: u32 = 0x80000000u;
      const FAILURE_CONTENDED: u32 = 0x40000000u;
      fn report_failure(index: u32) {
        let at = atomicAdd(&failed[0], 1u);
        if (1u + at < arrayLength(&failed)) { atomicStore(&failed[1u + at], index); }
      }

      struct Params { n: u32, reserved: u32 }
      @group(0) @binding(0) var<uniform> params: Params;
      @group(0) @binding(1) var<storage, read> keys: array<u32>;
      @group(0) @binding(2) var<storage, read_write> failed: array<atomic<u32>>;

      @compute @workgroup_size(64)
      fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
        for (var i = grid_thread(wid, nwg, lid, 64u); i < params.n; i += grid_threads(nwg, 64u)) {
          if (keys[i] == params.reserved) { report_failure(i | FAILURE_RESERVED); }
        }
      }
      "
    `);
  });

  it('a kernel with workgroup tallies, i32 and f32 params and a variant constant', () => {
    const odd = countHits.variant({ odd: true });
    expect(odd.cacheKey).toBe('odd=true');
    expect(odd.source).toMatchInlineSnapshot(`
      "const ODD: bool = true;

      // --- kernels.grid
      fn grid_workgroup(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.y * nwg.x + wid.x; }
      fn grid_thread(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, wg_size: u32) -> u32 { return grid_workgroup(wid, nwg) * wg_size + lid; }
      fn grid_threads(nwg: vec3<u32>, wg_size: u32) -> u32 { return nwg.x * nwg.y * wg_size; }

      // --- test.tallies
      const T_HITS: u32 = 0u;
      const T_MISSES: u32 = 1u;
      var<private> tally: array<u32, 2>;
      var<workgroup> wg_tally: array<atomic<u32>, 2>;

      fn count(t: u32, v: u32) { tally[t] += v; }

      fn flush_tallies(lid: u32) {
        for (var t = 0u; t < 2u; t++) {
          if (tally[t] != 0u) { atomicAdd(&wg_tally[t], tally[t]); }
        }
        workgroupBarrier();
        if (lid < 2u) {
          let v = atomicLoad(&wg_tally[lid]);
          if (v != 0u) {
            switch lid {
              case 0u: { atomicAdd(&counters[0], v); }
              default: { atomicAdd(&counters[1], v); }
            }
          }
        }
      }

      struct Params { n: u32, bias: i32, scale: f32 }
      @group(0) @binding(0) var<uniform> params: Params;
      @group(0) @binding(1) var<storage, read> keys: array<vec2<u32>>;
      @group(0) @binding(2) var<storage, read_write> counters: array<atomic<u32>>;

      @compute @workgroup_size(64)
      fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
        for (var i = grid_thread(wid, nwg, lid, 64u); i < params.n; i += grid_threads(nwg, 64u)) {
          let hit = (keys[i].x & 1u) == select(0u, 1u, ODD);
          count(select(T_MISSES, T_HITS, hit), 1u);
        }
        flush_tallies(lid);
      }
      "
    `);
  });

  it("marks failures with core's failure flags", () => {
    expect(FAILURE_FLAGS).toEqual(FailureFlag);
  });
});

describe('a defined kernel on the GPU', () => {
  /** dst[i] = src[i] * mul + add + floor((src[i] & 0xffff) * half): every params type, two storage bindings. */
  const affine = defineKernel({
    name: 'test.affine',
    workgroupSize: WG,
    params: { n: 'u32', mul: 'u32', add: 'i32', half: 'f32' },
    bindings: { params: uniform(), src: storage('read', 'u32'), dst: storage('read_write', 'u32') },
    source: (decls) =>
      composeWgsl(
        /* wgsl */ `
${decls}

${entryPoint(WG)} {
  ${gridStrideLoop('i', 'params.n', WG)} {
    let x = src[i];
    dst[i] = x * params.mul + bitcast<u32>(params.add) + u32(f32(x & 0xffffu) * params.half);
  }
}`,
        { modules: [gridModule] },
      ),
  }).variant();

  it('matches a CPU computation, through encode with params and buffers by name', async () => {
    const gpu = await testGpu();
    const rng = createRng(41);
    for (const [n, maxWorkgroups] of [
      [1, undefined],
      [1000, undefined],
      [70_001, 5],
    ] as const) {
      const host = rng.u32Array(n);
      const src = gpu.upload(host);
      const dst = gpu.createArray('u32', n);
      const p = { n, mul: rng.u32(), add: -12345, half: 0.5 };
      const encoder = gpu.device.createCommandEncoder();
      affine.encode(gpu, encoder, { buffers: { src: src.buffer, dst: dst.buffer }, params: p, invocations: n, maxWorkgroups });
      gpu.submit([encoder.finish()]);
      const expected = host.map((x) => (Math.imul(x, p.mul) + p.add + Math.floor((x & 0xffff) * p.half)) >>> 0);
      expectSameArrays(`affine n=${n}`, await gpu.download(dst), expected);
      src.destroy();
      dst.destroy();
    }
  });

  it('counts tallies and failures as the CPU does', async () => {
    const gpu = await testGpu();
    const rng = createRng(42);
    const n = 5000;
    const pairs = rng.u32Array(2 * n);
    const keys = gpu.upload(pairs);
    const counters = gpu.createArray('u32', 2);
    const failed = gpu.createArray('u32', 1 + n);
    const encoder = gpu.device.createCommandEncoder();
    countHits.variant({ odd: true }).encode(gpu, encoder, {
      buffers: { keys: keys.buffer, counters: counters.buffer },
      params: { n, bias: -1, scale: 1.5 },
      invocations: n,
    });
    const words = gpu.upload(pairs.filter((_, i) => i % 2 === 0).map((x) => x & 3));
    refuseReserved.variant().encode(gpu, encoder, {
      buffers: { keys: words.buffer, failed: failed.buffer },
      params: { n, reserved: 2 },
      invocations: n,
    });
    gpu.submit([encoder.finish()]);
    let odd = 0;
    for (let i = 0; i < n; i++) odd += (pairs[2 * i] as number) & 1;
    expect([...(await gpu.download(counters))]).toEqual([odd, n - odd]);
    const list = await gpu.download(failed);
    const refused: number[] = [];
    for (let i = 0; i < n; i++) if (((pairs[2 * i] as number) & 3) === 2) refused.push((i | FailureFlag.reserved) >>> 0);
    expect(list[0]).toBe(refused.length);
    expect([...list.subarray(1, 1 + refused.length)].sort((a, b) => a - b)).toEqual(refused);
    for (const a of [keys, counters, failed, words]) a.destroy();
  });
});
