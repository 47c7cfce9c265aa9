import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { defineChecks, expectSameArrays, runKernelOnArrays } from '@gpuhash/testing';
import { awayBits, candidateBuckets, farBit, HOME_SLOTS, HOMES, homeOf, keyWord, splitPointerFor, valueWord } from '../src';
import { commonModule } from '../src/wgsl/common';
import { hiveParams } from '../src/wgsl/params';

/**
 * WGSL placement helpers against their CPU twins, on random keys and table sizes: a key's home
 * (`hv_home` / `homeOf`), its bits in the away and far filters (`hv_away_bits`, `hv_far_bit` /
 * `awayBits`, `farBit`, disjoint, written as one word) and its two candidate buckets under a split
 * pointer (`hv_b1`, `hv_b2` / `candidateBuckets`). The kernel writes four words per key.
 */
const twinsKernel = defineKernel({
  name: 'hive.test.twins',
  workgroupSize: 64,
  params: hiveParams,
  bindings: { params: uniform(), keys: storage('read', 'u32'), out: storage('read_write', 'vec4<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = grid_thread(wid, nwg, lid, 64u); i < params.n; i += grid_threads(nwg, 64u)) {
    let k = keys[i];
    out[i] = vec4<u32>(hv_home(k), hv_away_bits(k) | hv_far_bit(k), hv_b1(k), hv_b2(k));
  }
}
`,
      { modules: [gridModule, commonModule] },
    ),
});

/**
 * For each (free mask m, home h, slot s, global slot g) of the input: `hv_pick_slot(m, h)` (the
 * slot a claim takes, as a bit), `hv_pick_prefix(h, s)` (the slots a claim tries before s and s),
 * and `hv_kw(g)`, `hv_vw(g)` (the words of slot g's key and value).
 */
const pickKernel = defineKernel({
  name: 'hive.test.pick-slot',
  workgroupSize: 64,
  params: hiveParams,
  bindings: { params: uniform(), cases: storage('read', 'vec4<u32>'), out: storage('read_write', 'vec4<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = grid_thread(wid, nwg, lid, 64u); i < params.n; i += grid_threads(nwg, 64u)) {
    let c = cases[i];
    out[i] = vec4<u32>(hv_pick_slot(c.x, c.y), hv_pick_prefix(c.y, c.z), hv_kw(c.w), hv_vw(c.w));
  }
}
`,
      { modules: [gridModule, commonModule] },
    ),
});

/** Params of n items under split pointer (n0, split); the rest of the geometry is not read here. */
function tableParams(n: number, n0: number, split: number) {
  return { n, n0, split, nalloc: 0, stash_lines: 0, lock_base: 0, list_cap: 0, max_evict: 0 };
}

/** The order in which a claim for home h tries a bucket's slots: from home h's first, around the bucket. */
function claimOrder(h: number): number[] {
  return Array.from({ length: 32 }, (_, i) => (HOME_SLOTS * h + i) % 32);
}

/** The claim policy on the CPU: the first free slot in `claimOrder(h)`, as a bit. */
function pickSlot(free: number, h: number): number {
  const s = claimOrder(h).find((t) => (free >>> t) & 1);
  return s === undefined ? 0 : (1 << s) >>> 0;
}

/** The slots a claim for home h tries up to and including slot s, as bits. */
function pickPrefix(h: number, s: number): number {
  const order = claimOrder(h);
  return order.slice(0, order.indexOf(s) + 1).reduce((m, t) => (m | (1 << t)) >>> 0, 0);
}

export const twinsChecks = defineChecks('hive/twins', [
  {
    name: 'hv_home, hv_away_bits, hv_far_bit, hv_b1 and hv_b2 match homeOf, awayBits, farBit and candidateBuckets',
    async run({ gpu, rng, scale }) {
      for (const buckets of [1, 3, 64, 1000 + rng.below(5000)]) {
        const p = splitPointerFor(buckets);
        const n = 4096 * scale;
        const keys = new Uint32Array(n);
        for (let i = 0; i < n; i++) keys[i] = rng.u32();
        keys.set([0, 1, 0x80000000, 0xffffffff]);
        const params = twinsKernel.variant().packParams(tableParams(n, p.n0, p.split));
        const [, , out] = await runKernelOnArrays(gpu, {
          kernel: twinsKernel.variant(),
          inputs: [params, keys, new Uint32Array(4 * n)],
          uniforms: [0],
          invocations: n,
        });
        const want = new Uint32Array(4 * n);
        for (let i = 0; i < n; i++) {
          const k = keys[i] as number;
          want.set([homeOf(k), (awayBits(k) | farBit(k)) >>> 0, ...candidateBuckets(k, p)], 4 * i);
        }
        expectSameArrays(`${buckets} buckets: (home, away | far bit, b1, b2) of key i at 4i`, out as Uint32Array, want);
      }
    },
  },
  {
    name: 'hv_pick_slot, hv_pick_prefix, hv_kw and hv_vw match the claim policy and keyWord, valueWord',
    async run({ gpu, rng, scale }) {
      const n = 4096 * scale;
      const cases = new Uint32Array(4 * n);
      for (let i = 0; i < n; i++) {
        // Masks from empty to full, with whole homes taken often enough to reach every branch.
        let m = rng.u32() & rng.u32();
        if (rng.below(3) === 0) m &= ~((((1 << HOME_SLOTS) - 1) << (HOME_SLOTS * rng.below(HOMES))) >>> 0);
        if (rng.below(3) === 0) m &= ~((((1 << HOME_SLOTS) - 1) << (HOME_SLOTS * rng.below(HOMES))) >>> 0);
        cases.set([m >>> 0, rng.below(HOMES), rng.below(32), rng.below(2 ** 26)], 4 * i);
      }
      cases.set([0, 0, 0, 0, 0xffffffff, HOMES - 1, 31, 31, 0x0000000f, HOMES - 1, 0, 32, 0xf0000000, 0, 31, 2 ** 26 - 1], 0);
      const params = pickKernel.variant().packParams(tableParams(n, 1, 0));
      const [, , out] = await runKernelOnArrays(gpu, {
        kernel: pickKernel.variant(),
        inputs: [params, cases, new Uint32Array(4 * n)],
        uniforms: [0],
        invocations: n,
      });
      const want = new Uint32Array(4 * n);
      for (let i = 0; i < n; i++) {
        const [m, h, s, g] = cases.subarray(4 * i, 4 * i + 4) as unknown as [number, number, number, number];
        want.set([pickSlot(m, h), pickPrefix(h, s), keyWord(g), valueWord(g)], 4 * i);
      }
      expectSameArrays('(pick, prefix, key word, value word) of case i', out as Uint32Array, want);
    },
  },
]);
