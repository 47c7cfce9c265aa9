import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { defineChecks, expectSameArrays, runKernelOnArrays } from '@gpuhash/testing';
import { awayBit, candidateBuckets, farBit, HOME_SLOTS, HOMES, homeOf, splitPointerFor } from '../src';
import { commonModule, PARAM_WORDS } from '../src/wgsl/common';

/**
 * WGSL placement helpers against their CPU twins, on random keys and table sizes: a key's home
 * (`hv_home` / `homeOf`), its bits in the away and far filters (`hv_away_bit`, `hv_far_bit` /
 * `awayBit`, `farBit`, disjoint, written as one word) and its two candidate buckets under a split
 * pointer (`hv_b1`, `hv_b2` / `candidateBuckets`). The kernel writes four words per key.
 */
const twinsKernel: Kernel = {
  name: 'hive.test.twins',
  workgroupSize: 64,
  source: composeWgsl(
    /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<u32>>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = grid_thread(wid, nwg, lid, 64u); i < params.n; i += grid_threads(nwg, 64u)) {
    let k = keys[i];
    out[i] = vec4<u32>(hv_home(k), hv_away_bit(k) | hv_far_bit(k), hv_b1(k), hv_b2(k));
  }
}
`,
    { modules: [gridModule, commonModule] },
  ),
};

/** `hv_pick_slot(m, h)` for pairs (free mask, home) of the input: the slot a claim takes, as a bit. */
const pickKernel: Kernel = {
  name: 'hive.test.pick-slot',
  workgroupSize: 64,
  source: composeWgsl(
    /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = grid_thread(wid, nwg, lid, 64u); i < params.n; i += grid_threads(nwg, 64u)) {
    out[i] = hv_pick_slot(pairs[i].x, pairs[i].y);
  }
}
`,
    { modules: [gridModule, commonModule] },
  ),
};

/** The claim policy on the CPU: the lowest free slot of home h, else of the next home, else the lowest free slot. */
function pickSlot(free: number, h: number): number {
  const homeMask = (home: number) => (((1 << HOME_SLOTS) - 1) << (HOME_SLOTS * home)) >>> 0;
  for (const pool of [free & homeMask(h), free & homeMask((h + 1) % HOMES), free]) {
    const m = pool >>> 0;
    if (m !== 0) return (m & -m) >>> 0;
  }
  return 0;
}

export const twinsChecks = defineChecks('hive/twins', [
  {
    name: 'hv_home, hv_away_bit, hv_far_bit, hv_b1 and hv_b2 match homeOf, awayBit, farBit and candidateBuckets',
    async run({ gpu, rng, scale }) {
      for (const buckets of [1, 3, 64, 1000 + rng.below(5000)]) {
        const p = splitPointerFor(buckets);
        const n = 4096 * scale;
        const keys = new Uint32Array(n);
        for (let i = 0; i < n; i++) keys[i] = rng.u32();
        keys.set([0, 1, 0x80000000, 0xffffffff]);
        const params = new Uint32Array(PARAM_WORDS);
        params.set([n, p.n0, p.split]);
        const [, , out] = await runKernelOnArrays(gpu, {
          kernel: twinsKernel,
          inputs: [params, keys, new Uint32Array(4 * n)],
          uniforms: [0],
          invocations: n,
        });
        const want = new Uint32Array(4 * n);
        for (let i = 0; i < n; i++) {
          const k = keys[i] as number;
          want.set([homeOf(k), (awayBit(k) | farBit(k)) >>> 0, ...candidateBuckets(k, p)], 4 * i);
        }
        expectSameArrays(`${buckets} buckets: (home, away | far bit, b1, b2) of key i at 4i`, out as Uint32Array, want);
      }
    },
  },
  {
    name: 'hv_pick_slot matches the claim policy (home, then the next home, then the lowest free slot)',
    async run({ gpu, rng, scale }) {
      const n = 4096 * scale;
      const pairs = new Uint32Array(2 * n);
      for (let i = 0; i < n; i++) {
        // Masks from empty to full, with whole homes taken often enough to reach every branch.
        let m = rng.u32() & rng.u32();
        if (rng.below(3) === 0) m &= ~((((1 << HOME_SLOTS) - 1) << (HOME_SLOTS * rng.below(HOMES))) >>> 0);
        if (rng.below(3) === 0) m &= ~((((1 << HOME_SLOTS) - 1) << (HOME_SLOTS * rng.below(HOMES))) >>> 0);
        pairs.set([m >>> 0, rng.below(HOMES)], 2 * i);
      }
      pairs.set([0, 0, 0xffffffff, 3, 0x000000ff, 3, 0xff000000, 0], 0);
      const params = new Uint32Array(PARAM_WORDS);
      params.set([n, 1, 0]);
      const [, , out] = await runKernelOnArrays(gpu, {
        kernel: pickKernel,
        inputs: [params, pairs, new Uint32Array(n)],
        uniforms: [0],
        invocations: n,
      });
      const want = Uint32Array.from({ length: n }, (_, i) => pickSlot(pairs[2 * i] as number, pairs[2 * i + 1] as number));
      expectSameArrays('the slot bit for (mask, home) i', out as Uint32Array, want);
    },
  },
]);
