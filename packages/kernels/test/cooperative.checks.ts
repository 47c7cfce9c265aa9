import type { Gpu, Kernel } from '@gpuhash/core';
import { type CheckSuite, defineChecks, expectSameArrays, type GpuCheck, type Rng, runKernelOnArrays } from '@gpuhash/testing';
import { composeWgsl } from '../src/compose';
import {
  CG_NO_LANE,
  cooperativeEntryParams,
  cooperativeModule,
  LaneGrouping,
  laneMaskModule,
  maskBelow,
  maskFirstLane,
  maskHas,
  maskLane,
  maskPopcount,
  maskRank,
  maskShr,
} from '../src/cooperative';
import { gridModule } from '../src/grid';

const WG = 128; // a multiple of every subgroup size WebGPU allows, so no subgroup is partial
const OPS_STRIDE = 17;
/** Tile sizes asked for; each is cut to the subgroup size. 128 means "the whole subgroup". */
const TILES = [128, 32, 8, 2, 1];

const variants = [
  { name: 'fallback', subgroups: false },
  { name: 'subgroups', subgroups: true },
] as const;

type Variant = (typeof variants)[number];

function header(v: Variant, extra: string): string {
  return /* wgsl */ `
struct Params { n: u32, tile: u32, nbuckets: u32, _pad: u32 }
@group(0) @binding(0) var<uniform> params: Params;
${extra}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, ${cooperativeEntryParams(v)}) {
  let i = grid_thread(wid, nwg, lid, ${WG}u);
  // Whole workgroups past n leave together, so every subgroup below stays complete.
  if (i >= params.n) { return; }
  cg_init_tiled(cg_sg_lane, cg_sg_size, params.tile);
  // Which invocation is lane 0 of this subgroup: the key that tells the CPU the grouping.
  let sg_key = ${v.subgroups ? 'subgroupBroadcastFirst(i)' : 'i'};
`;
}

function opsKernel(v: Variant): Kernel {
  const main = `${header(
    v,
    /* wgsl */ `
@group(0) @binding(1) var<storage, read> pred: array<u32>;
@group(0) @binding(2) var<storage, read> val: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;`,
  )}
  let o = i * ${OPS_STRIDE}u;
  out[o + 0u] = cg_sg_lane;
  out[o + 1u] = cg_sg_size;
  out[o + 2u] = sg_key;
  out[o + 3u] = cg_lane();
  out[o + 4u] = cg_size();
  let p = pred[i] != 0u;
  let m = cg_ballot(p);
  out[o + 5u] = m.x;
  out[o + 6u] = m.y;
  out[o + 7u] = m.z;
  out[o + 8u] = m.w;
  out[o + 9u] = cg_popcount(m);
  out[o + 10u] = cg_first_lane(m);
  out[o + 11u] = cg_rank(m);
  out[o + 12u] = select(0u, 1u, cg_is_first(m));
  out[o + 13u] = select(0u, 1u, cg_any(p)) | select(0u, 2u, cg_all(p));
  out[o + 14u] = cg_broadcast(val[i], src[i] % cg_size());
  out[o + 15u] = select(0u, 1u, cg_elect());
  out[o + 16u] = cg_ballot32(p);
}
`;
  return {
    name: `test.cg.ops.${v.name}`,
    workgroupSize: WG,
    source: composeWgsl(main, { modules: [gridModule, cooperativeModule(v)] }),
  };
}

/**
 * The hash tables' probe: each lane holds a query; the group takes the queries one leader at a
 * time, reads the leader's 32-slot bucket S slots per step, and the first lane that sees the key
 * writes the answer.
 */
function bucketKernel(v: Variant): Kernel {
  const main = `${header(
    v,
    /* wgsl */ `
@group(0) @binding(1) var<storage, read> buckets: array<u32>;
@group(0) @binding(2) var<storage, read> qkey: array<u32>;
@group(0) @binding(3) var<storage, read> qbucket: array<u32>;
@group(0) @binding(4) var<storage, read_write> result: array<u32>;
@group(0) @binding(5) var<storage, read_write> info: array<u32>;`,
  )}
  info[i * 2u] = cg_size();
  let key = qkey[i];
  let bucket = qbucket[i] % params.nbuckets;
  var pending = cg_ballot(true);
  var rounds = 0u;
  loop {
    if (cg_mask_empty(pending)) { break; }
    let leader = cg_first_lane(pending);
    let k = cg_broadcast(key, leader);
    let b = cg_broadcast(bucket, leader);
    let q = cg_broadcast(i, leader);
    for (var step = 0u; step < cg_steps(32u); step++) {
      let slot = step * cg_size() + cg_lane();
      let hit = slot < 32u && buckets[b * 32u + slot] == k;
      let found = cg_ballot(hit);
      if (!cg_mask_empty(found)) {
        if (cg_is_first(found)) {
          result[q * 2u] = slot;
          result[q * 2u + 1u] = step;
        }
        break;
      }
    }
    pending &= ~cg_mask_lane(leader);
    rounds++;
  }
  info[i * 2u + 1u] = rounds;
}
`;
  return {
    name: `test.cg.bucket.${v.name}`,
    workgroupSize: WG,
    source: composeWgsl(main, { modules: [gridModule, cooperativeModule(v)] }),
  };
}

/** Which tile size the kernel should have used, given the subgroup size it recorded. */
function tileSize(requested: number, sgSize: number): number {
  const t = Math.max(1, Math.min(requested, sgSize));
  return 2 ** Math.floor(Math.log2(t));
}

function invocations(scale: number): number {
  return Math.max(WG, Math.round((4096 * scale) / WG) * WG);
}

/** Predicates whose density steps from none to all across workgroups, so empty and full masks occur. */
function predicates(rng: Rng, n: number): Uint32Array {
  const pred = new Uint32Array(n);
  for (let i = 0; i < n; i++) pred[i] = rng.below(8) < Math.floor(i / WG) % 9 ? 1 : 0;
  return pred;
}

/** Checks the recorded subgroups are consistent and complete, and returns the cooperative grouping. */
function checkGrouping(gpu: Gpu, v: Variant, rec: (i: number, k: number) => number, n: number, tile: number): LaneGrouping {
  const sgKeys = new Float64Array(n);
  const sgLanes = new Uint32Array(n);
  const sizes = new Set<number>();
  for (let i = 0; i < n; i++) {
    const [lane, size, key] = [rec(i, 0), rec(i, 1), rec(i, 2)];
    sizes.add(size);
    if (!v.subgroups && size !== 1) throw new Error(`fallback: invocation ${i} reports subgroup size ${size}`);
    if (v.subgroups && gpu.subgroups.minSize > 0 && (size < gpu.subgroups.minSize || size > gpu.subgroups.maxSize)) {
      throw new Error(`subgroup size ${size} is outside the adapter's ${gpu.subgroups.minSize}..${gpu.subgroups.maxSize}`);
    }
    if (lane >= size) throw new Error(`invocation ${i}: lane ${lane} >= subgroup size ${size}`);
    sgKeys[i] = key;
    sgLanes[i] = lane;
  }
  const subgroups = new LaneGrouping(sgKeys, sgLanes);
  const cgKeys = new Float64Array(n);
  const cgLanes = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const size = rec(i, 1);
    if (subgroups.sizeOf(i) !== size) throw new Error(`invocation ${i}: its subgroup has ${subgroups.sizeOf(i)} active lanes of ${size}`);
    if (subgroups.memberAt(i, 0) !== sgKeys[i])
      throw new Error(`invocation ${i}: subgroup key ${sgKeys[i]} is not the invocation at lane 0`);
    const t = tileSize(tile, size);
    cgKeys[i] = sgKeys[i]! * 128 + Math.floor(sgLanes[i]! / t);
    cgLanes[i] = sgLanes[i]! % t;
  }
  return new LaneGrouping(cgKeys, cgLanes);
}

function opsCheck(v: Variant): GpuCheck {
  return {
    name: `${v.name}: ballot, ballot32, popcount, first lane, rank, elect, any/all and broadcast match the CPU model`,
    async run({ gpu, rng, scale }) {
      if (v.subgroups && !gpu.subgroups.supported) return; // nothing to run without the feature
      const n = invocations(scale);
      const kernel = opsKernel(v);
      for (const tile of v.subgroups ? TILES : [128]) {
        const pred = predicates(rng, n);
        const val = rng.u32Array(n);
        const src = rng.u32Array(n);
        const [, , , , out] = await runKernelOnArrays(gpu, {
          kernel,
          inputs: [new Uint32Array([n, tile, 0, 0]), pred, val, src, new Uint32Array(n * OPS_STRIDE)],
          uniforms: [0],
          invocations: n,
        });
        const rec = (i: number, k: number) => out![i * OPS_STRIDE + k]!;
        const groups = checkGrouping(gpu, v, rec, n, tile);
        const expected = new Uint32Array(n * OPS_STRIDE);
        for (let i = 0; i < n; i++) {
          const o = i * OPS_STRIDE;
          const lane = groups.lanes[i]!;
          const size = tileSize(tile, rec(i, 1));
          const m = groups.ballot(i, (j) => pred[j] !== 0);
          const source = groups.memberAt(i, src[i]! % size);
          if (source === undefined) throw new Error(`invocation ${i}: lane ${src[i]! % size} of its group is inactive`);
          expected.set([rec(i, 0), rec(i, 1), rec(i, 2), lane, size, ...m], o);
          expected[o + 9] = maskPopcount(m);
          expected[o + 10] = maskFirstLane(m);
          expected[o + 11] = maskRank(m, lane);
          expected[o + 12] = maskFirstLane(m) === lane ? 1 : 0;
          expected[o + 13] = (maskPopcount(m) > 0 ? 1 : 0) | (maskPopcount(m) === groups.sizeOf(i) ? 2 : 0);
          expected[o + 14] = val[source]!;
          expected[o + 15] = lane === 0 ? 1 : 0;
          // Groups wider than 32 lanes: cg_ballot32 holds lanes 0..31 only.
          expected[o + 16] = m[0];
        }
        expectSameArrays(`cg ops (${v.name}, tile ${tile}, ${n} invocations; stride ${OPS_STRIDE})`, out!, expected);
      }
    },
  };
}

function bucketCheck(v: Variant): GpuCheck {
  return {
    name: `${v.name}: a group finds keys in 32-slot buckets, S lanes in 32/S steps, the first finder answers`,
    async run({ gpu, rng, scale }) {
      if (v.subgroups && !gpu.subgroups.supported) return;
      const n = invocations(scale);
      const nbuckets = 64;
      // Keys from a small range, so buckets hold duplicates and the lowest slot must win.
      const buckets = new Uint32Array(nbuckets * 32).map(() => 1 + rng.below(1500));
      const kernel = bucketKernel(v);
      for (const tile of v.subgroups ? [128, 32, 8, 1] : [128]) {
        const qbucket = rng.u32Array(n);
        const qkey = new Uint32Array(n).map((_, i) => {
          const b = qbucket[i]! % nbuckets;
          // Half the queries take a key from their bucket; the others are mostly misses.
          return rng.below(2) === 0 ? buckets[b * 32 + rng.below(32)]! : 1 + rng.below(3000);
        });
        const [, , , , result, info] = await runKernelOnArrays(gpu, {
          kernel,
          inputs: [
            new Uint32Array([n, tile, nbuckets, 0]),
            buckets,
            qkey,
            qbucket,
            new Uint32Array(n * 2).fill(CG_NO_LANE),
            new Uint32Array(n * 2),
          ],
          uniforms: [0],
          invocations: n,
        });
        const expected = new Uint32Array(n * 2).fill(CG_NO_LANE);
        const expectedInfo = new Uint32Array(n * 2);
        let hits = 0;
        for (let i = 0; i < n; i++) {
          const s = info![i * 2]!;
          if (s < 1 || s > 128 || (!v.subgroups && s !== 1)) throw new Error(`invocation ${i}: group size ${s}`);
          expectedInfo[i * 2] = s;
          expectedInfo[i * 2 + 1] = s; // one round per lane of the group
          const b = qbucket[i]! % nbuckets;
          const slot = buckets.subarray(b * 32, b * 32 + 32).indexOf(qkey[i]!);
          if (slot < 0) continue;
          hits++;
          expected[i * 2] = slot;
          expected[i * 2 + 1] = Math.floor(slot / s);
        }
        if (hits < n / 4) throw new Error(`only ${hits} of ${n} queries hit: the test inputs are wrong`);
        expectSameArrays(`group sizes and rounds (${v.name}, tile ${tile})`, info!, expectedInfo);
        expectSameArrays(`bucket find: slot, step (${v.name}, tile ${tile})`, result!, expected, {
          qkey: [...qkey].flatMap((k) => [k, k]),
        });
      }
    },
  };
}

const MASK_STRIDE = 20;

const maskKernel: Kernel = {
  name: 'test.cg.mask',
  workgroupSize: 64,
  source: composeWgsl(
    /* wgsl */ `
@group(0) @binding(0) var<storage, read> masks: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> args: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = grid_thread(wid, nwg, lid, 64u);
  if (i >= arrayLength(&args)) { return; }
  let m = masks[i];
  let a = args[i] & 127u; // a lane, a shift
  let n = args[i] % 129u; // a lane count
  let o = i * ${MASK_STRIDE}u;
  out[o] = cg_popcount(m);
  out[o + 1u] = cg_first_lane(m);
  out[o + 2u] = cg_rank_of(m, a);
  out[o + 3u] = select(0u, 1u, cg_mask_has(m, a));
  out[o + 4u] = select(0u, 1u, cg_mask_empty(m));
  let below = cg_mask_below(n);
  let single = cg_mask_lane(a);
  let shifted = cg_mask_shr(m, a);
  for (var w = 0u; w < 4u; w++) {
    out[o + 8u + w] = below[w];
    out[o + 12u + w] = single[w];
    out[o + 16u + w] = shifted[w];
  }
}
`,
    { modules: [gridModule, laneMaskModule] },
  ),
};

/** Random masks of every density, including empty and full ones. */
function randomMask(rng: Rng): number[] {
  const kind = rng.below(6);
  return [0, 1, 2, 3].map(() => {
    if (kind === 0) return 0;
    if (kind === 1) return 0xffffffff;
    if (kind === 2) return rng.below(3) === 0 ? (1 << rng.below(32)) >>> 0 : 0;
    return (rng.u32() & (kind === 3 ? rng.u32() & rng.u32() : 0xffffffff)) >>> 0;
  });
}

const maskCheck: GpuCheck = {
  name: 'lane-mask arithmetic matches its CPU twins bit for bit',
  async run({ gpu, rng, scale }) {
    const n = 4096 * scale;
    const masks = new Uint32Array(n * 4);
    for (let i = 0; i < n; i++) masks.set(randomMask(rng), i * 4);
    const args = rng.u32Array(n);
    const [, , out] = await runKernelOnArrays(gpu, {
      kernel: maskKernel,
      inputs: [masks, args, new Uint32Array(n * MASK_STRIDE)],
      invocations: n,
    });
    const expected = new Uint32Array(n * MASK_STRIDE);
    for (let i = 0; i < n; i++) {
      const m = masks.subarray(i * 4, i * 4 + 4);
      const a = args[i]! & 127;
      const o = i * MASK_STRIDE;
      expected.set([maskPopcount(m), maskFirstLane(m), maskRank(m, a), maskHas(m, a) ? 1 : 0, maskPopcount(m) === 0 ? 1 : 0], o);
      expected.set(maskBelow(args[i]! % 129), o + 8);
      expected.set(maskLane(a), o + 12);
      expected.set(maskShr(m, a), o + 16);
    }
    expectSameArrays(`lane masks (stride ${MASK_STRIDE})`, out!, expected);
  },
};

/** Cooperative-group primitives against CPU models built from the groupings the GPU reports. */
export const cooperativeChecks: CheckSuite = defineChecks('kernels/cooperative', [
  maskCheck,
  ...variants.flatMap((v) => [opsCheck(v), bucketCheck(v)]),
]);
