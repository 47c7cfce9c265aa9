import type { Gpu, Kernel } from '@gpuhash/core';
import { defineChecks, expectSameArrays, type Rng, runKernelOnArrays } from '@gpuhash/testing';
import { composeWgsl, type WgslModule } from '../src/compose';
import { gridModule } from '../src/grid';
import {
  bitHash1,
  bitHash2,
  bitHashModule,
  byteMatch,
  fmix32,
  fmix32Module,
  fmix64Module,
  fmix64U32,
  fmix64Words,
  jenkins,
  jenkinsModule,
  jenkinsSeeded,
  UNIVERSAL_PRIME,
  u32AddSat,
  u64Add,
  u64AddSat,
  u64Le,
  u64Lt,
  u64Module,
  u64Mul,
  u64MulWide,
  u64OrderModule,
  universalHash,
  universalHashModP,
  universalModule,
  xxhash32,
  xxhash32Module,
} from '../src/hash';

const WG = 64;
const P = UNIVERSAL_PRIME;
/** Keys every check includes: the extremes, the sign bit, and the values around p = 2^32 - 5. */
const EDGE_WORDS = [0, 1, 2, 0xffffffff, 0x80000000, 0x7fffffff, 0xffff, 0x10000, P - 1, P, P + 1, 0xfffffffe];

type Words4 = [number, number, number, number];

/** One hash under test: `body` is the WGSL of `fn hash_case(key: vec2<u32>, arg: vec4<u32>) -> vec4<u32>`. */
interface HashCase {
  name: string;
  module: WgslModule;
  body: string;
  /** Names of the result lanes the case fills (compared one by one). */
  lanes: string[];
  /** Whether keys have a random high word (64-bit keys); otherwise it is 0. */
  wideKeys?: boolean;
  /** Per-key arguments (seeds, universal parameters, a second operand), given the key's low word; zeros when absent. */
  args?: (rng: Rng, i: number, key: number) => Words4;
  /** Names of the argument words, for mismatch reports. */
  argNames?: string[];
  cpu(lo: number, hi: number, arg: Words4): number[];
}

function hashKernel(c: HashCase): Kernel {
  const main = /* wgsl */ `
struct Params { n: u32, _pad0: u32, _pad1: u32, _pad2: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> args: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> results: array<vec4<u32>>;

fn hash_case(key: vec2<u32>, arg: vec4<u32>) -> vec4<u32> {
  ${c.body}
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = grid_thread(wid, nwg, lid, WG); i < params.n; i += grid_threads(nwg, WG)) {
    results[i] = hash_case(keys[i], args[i]);
  }
}
`;
  return {
    name: `kernels.hash.check.${c.name}`,
    workgroupSize: WG,
    source: composeWgsl(main, { modules: [gridModule, c.module], constants: { WG } }),
  };
}

/** A word: an edge value a quarter of the time, else uniform. */
function word(rng: Rng): number {
  return rng.below(4) === 0 ? (EDGE_WORDS[rng.below(EDGE_WORDS.length)] as number) : rng.u32();
}

function lane(data: Uint32Array, stride: number, index: number): Uint32Array {
  const out = new Uint32Array(data.length / stride);
  for (let i = 0; i < out.length; i++) out[i] = data[i * stride + index] as number;
  return out;
}

async function checkHash(gpu: Gpu, rng: Rng, scale: number, c: HashCase): Promise<void> {
  const n = 4096 * scale;
  const keys = new Uint32Array(2 * n);
  const args = new Uint32Array(4 * n);
  for (let i = 0; i < n; i++) {
    // Every edge word as a low word first (with high word 0, then paired with every edge high word).
    const e = EDGE_WORDS.length;
    keys[2 * i] = i < e * (e + 1) ? (EDGE_WORDS[i % e] as number) : rng.u32();
    if (c.wideKeys) keys[2 * i + 1] = i < e ? 0 : i < e * (e + 1) ? (EDGE_WORDS[Math.floor(i / e) - 1] as number) : word(rng);
    if (c.args) args.set(c.args(rng, i, keys[2 * i] as number), 4 * i);
  }
  const expected = new Uint32Array(4 * n);
  for (let i = 0; i < n; i++) {
    const arg = Array.from(args.subarray(4 * i, 4 * i + 4)) as Words4;
    expected.set(c.cpu(keys[2 * i] as number, keys[2 * i + 1] as number, arg), 4 * i);
  }
  const outputs = await runKernelOnArrays(gpu, {
    kernel: hashKernel(c),
    inputs: [new Uint32Array([n, 0, 0, 0]), keys, args, new Uint32Array(4 * n)],
    uniforms: [0],
    invocations: n,
    // Fewer threads than keys, so the grid-stride loop takes several turns.
    maxWorkgroups: Math.max(1, Math.ceil(n / WG / 3)),
  });
  const got = outputs[3] as Uint32Array;
  const inputs: Record<string, Uint32Array> = { key: lane(keys, 2, 0) };
  if (c.wideKeys) inputs.keyHi = lane(keys, 2, 1);
  (c.argNames ?? []).forEach((name, j) => {
    inputs[name] = lane(args, 4, j);
  });
  c.lanes.forEach((name, j) => {
    expectSameArrays(`${c.name}: ${name}`, lane(got, 4, j), lane(expected, 4, j), inputs);
  });
}

/** Seeds: 0..3 (0 is the unseeded function) for some keys, random or edge words for the rest. */
const seedArg = (rng: Rng, i: number): Words4 => [i % 8 < 4 ? i % 8 : word(rng), 0, 0, 0];

const BUCKETS = [1, 2, 3, 256, 1000, 65_537, 1 << 20, P, 0x80000000, 0xffffffff];

/**
 * (a, b, buckets) for one key: family members, edge words (a = 0, a or b >= p: the arithmetic is
 * exact for any u32), and products chosen to reach the reduction's rare branches, which random
 * parameters hit with probability ~2^-30.
 */
function universalArgs(rng: Rng, _: number, key: number): Words4 {
  const buckets = rng.below(2) ? (BUCKETS[rng.below(BUCKETS.length)] as number) : 1 + rng.below(0xffffffff);
  const target = key > 1 << 30 ? reductionEdge(rng, BigInt(key), rng.below(2) === 0) : undefined;
  if (target !== undefined && rng.below(2) === 0) {
    // a * key + b = target with b < key.
    const k = BigInt(key);
    return [Number(target / k), Number(target % k), buckets, 0];
  }
  return rng.below(2) ? [1 + rng.below(P - 1), rng.below(P), buckets, 0] : [word(rng), word(rng), buckets, 0];
}

/**
 * A 64-bit value x = hi * 2^32 + lo, hi < key (so that a = x / key fits 32 bits), for which
 * hash_universal_mod_p either overflows in its second fold (s.x + 5 * s.y >= 2^32) or ends in
 * [p, 2^32) before the final subtraction.
 */
function reductionEdge(rng: Rng, key: bigint, overflow: boolean): bigint | undefined {
  const two32 = 1n << 32n;
  const j = BigInt(rng.below(5));
  if (overflow) {
    const hi = (1n << 30n) + BigInt(rng.below(Number(key - (1n << 30n))));
    const lo = (((two32 - 1n - j - ((5n * hi) % two32)) % two32) + two32) % two32;
    const s = 5n * hi + lo;
    return s >= two32 && s % two32 >= two32 - 5n * (s / two32) ? hi * two32 + lo : undefined;
  }
  const hi = BigInt(rng.below(Math.min(Number(key), 1 << 28)));
  const lo = BigInt(P) + j - 5n * hi;
  return lo >= 0n ? hi * two32 + lo : undefined;
}

const cases: HashCase[] = [
  {
    name: 'fmix32',
    module: fmix32Module,
    body: 'return vec4<u32>(hash_fmix32(key.x), 0u, 0u, 0u);',
    lanes: ['fmix32'],
    cpu: (k) => [fmix32(k)],
  },
  {
    name: 'bithash1',
    module: bitHashModule,
    body: 'return vec4<u32>(hash_bithash1(key.x), 0u, 0u, 0u);',
    lanes: ['bitHash1'],
    cpu: (k) => [bitHash1(k)],
  },
  {
    name: 'bithash2',
    module: bitHashModule,
    body: 'return vec4<u32>(hash_bithash2(key.x), 0u, 0u, 0u);',
    lanes: ['bitHash2'],
    cpu: (k) => [bitHash2(k)],
  },
  {
    name: 'jenkins',
    module: jenkinsModule,
    body: 'return vec4<u32>(hash_jenkins(key.x), 0u, 0u, 0u);',
    lanes: ['jenkins'],
    cpu: (k) => [jenkins(k)],
  },
  {
    name: 'jenkins_seeded',
    module: jenkinsModule,
    body: 'return vec4<u32>(hash_jenkins_seeded(key.x, arg.x), 0u, 0u, 0u);',
    lanes: ['jenkinsSeeded'],
    args: seedArg,
    argNames: ['seed'],
    cpu: (k, _, [seed]) => [jenkinsSeeded(k, seed)],
  },
  {
    name: 'xxhash32',
    module: xxhash32Module,
    body: 'return vec4<u32>(hash_xxhash32(key.x, arg.x), 0u, 0u, 0u);',
    lanes: ['xxhash32'],
    args: seedArg,
    argNames: ['seed'],
    cpu: (k, _, [seed]) => [xxhash32(k, seed)],
  },
  {
    name: 'universal',
    module: universalModule,
    body: 'return vec4<u32>(hash_universal_mod_p(key.x, arg.x, arg.y), hash_universal(key.x, arg.x, arg.y, arg.z), 0u, 0u);',
    lanes: ['mod p', 'mod buckets'],
    args: universalArgs,
    argNames: ['a', 'b', 'buckets'],
    cpu: (k, _, [a, b, buckets]) => [universalHashModP(k, a, b), universalHash(k, a, b, buckets)],
  },
  {
    name: 'fmix64',
    module: fmix64Module,
    body: 'let h = hash_fmix64(key);\n  return vec4<u32>(h.x, h.y, hash_fmix64_u32(key), 0u);',
    lanes: ['lo', 'hi', 'folded'],
    wideKeys: true,
    cpu: (lo, hi) => [...fmix64Words(lo, hi), fmix64U32(lo, hi)],
  },
  {
    name: 'u64_mul_wide_add',
    module: u64Module,
    body: 'return vec4<u32>(hash_u64_mul_wide(key.x, arg.x), hash_u64_add(key, arg.xy));',
    lanes: ['mul_wide lo', 'mul_wide hi', 'add lo', 'add hi'],
    wideKeys: true,
    args: (rng) => [word(rng), word(rng), 0, 0],
    argNames: ['b.lo', 'b.hi'],
    cpu: (lo, hi, [blo, bhi]) => [...u64MulWide(lo, blo), ...u64Add([lo, hi], [blo, bhi])],
  },
  {
    name: 'u64_mul',
    module: u64Module,
    body: 'return vec4<u32>(hash_u64_mul(key, arg.xy), 0u, 0u);',
    lanes: ['mul lo', 'mul hi'],
    wideKeys: true,
    args: (rng) => [word(rng), word(rng), 0, 0],
    argNames: ['b.lo', 'b.hi'],
    cpu: (lo, hi, [blo, bhi]) => u64Mul([lo, hi], [blo, bhi]),
  },
  {
    name: 'u64_order',
    module: u64OrderModule,
    body: 'return vec4<u32>(select(0u, 1u, hash_u64_lt(key, arg.xy)) | select(0u, 2u, hash_u64_le(key, arg.xy)), hash_u32_add_sat(key.x, arg.x), hash_u64_add_sat(key, arg.xy));',
    lanes: ['lt | le << 1', 'u32 add_sat', 'add_sat lo', 'add_sat hi'],
    wideKeys: true,
    // A quarter of the second operands equal the key (ties), a quarter share its high word.
    args: (rng, i, key) => {
      const r = i % 4;
      const hi = word(rng);
      return r === 0 ? [key, 0, 0, 0] : r === 1 ? [word(rng), 0, 0, 0] : [word(rng), hi, 0, 0];
    },
    argNames: ['b.lo', 'b.hi'],
    cpu: (lo, hi, [blo, bhi]) => [
      (u64Lt([lo, hi], [blo, bhi]) ? 1 : 0) | (u64Le([lo, hi], [blo, bhi]) ? 2 : 0),
      u32AddSat(lo, blo),
      ...u64AddSat([lo, hi], [blo, bhi]),
    ],
  },
  {
    name: 'byte_match',
    module: u64OrderModule,
    body: 'return vec4<u32>(hash_byte_match(key.x, arg.x), hash_byte_match(key.y, arg.x), hash_byte_match(key.x, key.x & 0xffu), 0u);',
    lanes: ['match lo', 'match hi', 'match own byte'],
    wideKeys: true,
    // Bytes 0x00, 0x7f, 0x80, 0xff and random ones, so borrows and high bits are exercised.
    args: (rng, i) => [[0, 0x7f, 0x80, 0xff, 1][i % 6] ?? rng.below(256), 0, 0, 0],
    argNames: ['byte'],
    cpu: (lo, hi, [b]) => [byteMatch(lo, b), byteMatch(hi, b), byteMatch(lo, lo & 0xff)],
  },
];

/** Every hash function's WGSL against its CPU twin, bit for bit, on random and edge keys. */
export const hashChecks = defineChecks(
  'kernels/hash',
  cases.map((c) => ({ name: `${c.name} matches its CPU twin`, run: ({ gpu, rng, scale }) => checkHash(gpu, rng, scale, c) })),
);
