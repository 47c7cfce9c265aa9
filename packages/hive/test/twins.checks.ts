import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { defineChecks, expectSameArrays, type Rng, runKernelOnArrays } from '@gpuhash/testing';
import {
  awayBits,
  candidateBuckets,
  farBit,
  HOME_SLOTS,
  HOMES,
  homeOf,
  keyWord,
  type SplitPointer,
  splitPointerFor,
  valueWord,
} from '../src';
import { bucketCount, HOME_SIZES, type HomeGeometry, homeGeometry, stashLineOf, stashLinesFor } from '../src/split-pointer';
import { COUNTER_WORDS, Counter, commonModule } from '../src/wgsl/common';
import { findKernel } from '../src/wgsl/find';
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
function claimOrder(h: number, homeSlots = HOME_SLOTS): number[] {
  return Array.from({ length: 32 }, (_, i) => (homeSlots * h + i) % 32);
}

/** The claim policy on the CPU: the first free slot in `claimOrder(h)`, as a bit. */
function pickSlot(free: number, h: number, homeSlots = HOME_SLOTS): number {
  const s = claimOrder(h, homeSlots).find((t) => (free >>> t) & 1);
  return s === undefined ? 0 : (1 << s) >>> 0;
}

const OVERFLOW_BIT = 2;
const STASH_BIT = 4;

/** A table's buffers as the find kernel reads them, built on the CPU, and the pairs they hold. */
interface Layout {
  p: SplitPointer;
  nalloc: number;
  lines: number;
  slots: Uint32Array;
  meta: Uint32Array;
  counters: Uint32Array;
  pairs: Map<number, number>;
}

/**
 * Fills a table of `buckets` buckets (and its stash lines) with random keys to about \`load\` the
 * way the table may leave them: most by the claim policy (first bucket, home first, then around
 * it; then the second bucket; then the stash line), others in any free slot of either bucket or in
 * the stash, each with the placement bits its store sets on its first bucket's lock word
 * (\`hv_placement_bits\`). Value words of free slots hold garbage, so a find reading the wrong word
 * shows.
 */
function buildLayout(rng: Rng, g: HomeGeometry, buckets: number, load: number): Layout {
  const p = splitPointerFor(buckets);
  const nalloc = bucketCount(p);
  const lines = stashLinesFor(nalloc);
  const slots = rng.u32Array(64 * (nalloc + lines));
  const free = new Uint32Array(nalloc + lines).fill(0xffffffff);
  const lock = new Uint32Array(nalloc);
  for (let s = 0; s < 32 * (nalloc + lines); s++) slots[g.keyWord(s)] = 0xffffffff;
  const pairs = new Map<number, number>();
  let stashed = 0;
  const randomFree = (m: number) => {
    const bits = Array.from({ length: 32 }, (_, t) => t).filter((t) => (m >>> t) & 1);
    return bits.length === 0 ? -1 : (bits[rng.below(bits.length)] as number);
  };
  const target = Math.floor(load * 32 * nalloc);
  for (let tries = 0; pairs.size < target && tries < 4 * target; tries++) {
    const key = rng.u32();
    if (key >= 0xfffffffe || pairs.has(key)) continue;
    const [b1, b2] = candidateBuckets(key, p);
    const h = g.homeOf(key);
    const claim = (b: number) => {
      const bit = pickSlot(free[b] as number, h, g.homeSlots);
      return bit === 0 ? -1 : 31 - Math.clz32(bit);
    };
    const line = nalloc + stashLineOf(key, lines);
    // Candidate places in order of preference, by a random policy.
    const r = rng.below(10);
    const order: Array<[number, () => number]> =
      r < 6
        ? [
            [b1, () => claim(b1)],
            [b2, () => claim(b2)],
            [line, () => randomFree(free[line] as number)],
          ]
        : r < 8
          ? [
              [b1, () => randomFree(free[b1] as number)],
              [b2, () => randomFree(free[b2] as number)],
            ]
          : r < 9
            ? [
                [b2, () => (rng.below(2) ? claim(b2) : randomFree(free[b2] as number))],
                [b1, () => claim(b1)],
              ]
            : [[line, () => randomFree(free[line] as number)]];
    for (const [b, pick] of order) {
      const t = pick();
      if (t < 0) continue;
      const at = 32 * b + t;
      const value = rng.u32();
      slots[g.keyWord(at)] = key;
      slots[g.valueWord(at)] = value;
      free[b] = ((free[b] as number) & ~(1 << t)) >>> 0;
      pairs.set(key, value);
      let bits = 0;
      if (b >= nalloc) {
        bits = OVERFLOW_BIT | STASH_BIT | farBit(key);
        stashed++;
      } else if (b !== b1) bits = OVERFLOW_BIT | farBit(key);
      else if (Math.floor(t / g.homeSlots) !== h) bits = g.awayBits(key);
      lock[b1] = ((lock[b1] as number) | bits) >>> 0;
      break;
    }
  }
  const meta = new Uint32Array(2 * nalloc + lines);
  meta.set(free);
  meta.set(lock, nalloc + lines);
  const counters = new Uint32Array(COUNTER_WORDS);
  counters[Counter.stash] = stashed;
  return { p, nalloc, lines, slots, meta, counters, pairs };
}

/** The slots a claim for home h tries up to and including slot s, as bits. */
function pickPrefix(h: number, s: number): number {
  const order = claimOrder(h);
  return order.slice(0, order.indexOf(s) + 1).reduce((m, t) => (m | (1 << t)) >>> 0, 0);
}

export const twinsChecks = defineChecks('hive/twins', [
  {
    name: 'find, for every home size the table supports (and homes of 16), answers as a CPU model of the table it reads',
    async run({ gpu, rng, scale }) {
      for (const homeSlots of [...HOME_SIZES, 16]) {
        const g = homeGeometry(homeSlots);
        const kernel = findKernel.variant({ homeSlots });
        for (const [buckets, load] of [
          [1, 0.9],
          [3, 0.97],
          [64 * scale, 0.5],
          [40 + rng.below(200) * scale, 0.95],
          [128 * scale, 0.99],
        ] as const) {
          const t = buildLayout(rng, g, buckets, load);
          const hits = [...t.pairs.keys()];
          const misses = rng.distinctU32(hits.length + 64, [...hits, 0xfffffffe, 0xffffffff]);
          const keys = Uint32Array.from([...hits, ...misses, 0xfffffffe, 0xffffffff]);
          for (let i = keys.length - 1; i > 0; i--) {
            const j = rng.below(i + 1);
            [keys[i], keys[j]] = [keys[j] as number, keys[i] as number];
          }
          const n = keys.length;
          const params = kernel.packParams({
            n,
            n0: t.p.n0,
            split: t.p.split,
            nalloc: t.nalloc,
            stash_lines: t.lines,
            lock_base: t.nalloc + t.lines,
            list_cap: 0,
            max_evict: 0,
          });
          const out = await runKernelOnArrays(gpu, {
            kernel,
            inputs: [params, keys, keys, new Uint32Array(n), new Uint32Array(n), t.counters, t.meta, t.slots],
            uniforms: [0],
            invocations: n,
          });
          const want = new Uint32Array(2 * n);
          const got = new Uint32Array(2 * n);
          for (let i = 0; i < n; i++) {
            const v = t.pairs.get(keys[i] as number);
            want.set([v ?? 0, v === undefined ? 0 : 1], 2 * i);
            got.set([(out[3] as Uint32Array)[i] as number, (out[4] as Uint32Array)[i] as number], 2 * i);
          }
          const stashed = t.counters[Counter.stash];
          expectSameArrays(
            `homes of ${homeSlots}, ${buckets} buckets at load ${load} (${stashed} stashed): (value, found) of key i at 2i`,
            got,
            want,
            {
              keys,
            },
          );
        }
      }
    },
  },
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
