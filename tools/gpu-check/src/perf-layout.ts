/**
 * What a find's reads cost in two bucket layouts, with no table around them: each invocation
 * picks a random bucket of a 1 GiB slots buffer (2^22 buckets of 256 bytes) and a random home of
 * it, and reads what a find reads there.
 * - split: the bucket is its 32 keys (one 128-byte line), then their 32 values (Hive today): a
 *   home's keys and values are 32-byte sectors 128 bytes apart.
 * - interleaved: each home is its 8 keys then their 8 values, so both lie in one 64-byte run.
 * Each variant with and without the bucket's lock word (a 32 MB array, as the meta buffer), and
 * the full key line of a bucket as a find away from home reads it; and the same reads as atomic
 * loads of a read_write binding (what the op passes must use), against plain loads. The random
 * 4-byte gather is the reference.
 *   node perf-layout.mjs
 */
import { type Kernel, requestGpu } from '@gpuhash/core';
import { composeWgsl, fmix32Module, gridModule } from '@gpuhash/kernels';

const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}`);
const BUCKETS = gpu.isSoftware ? 2 ** 16 : 2 ** 22;
const N = gpu.isSoftware ? 2 ** 18 : 2 ** 27;

// A home's reads in each layout (q: its first 16-byte word), and the lock word from an array
// 2^shift times smaller than one word per bucket (as a smaller filter array would be read).
const splitHome = 'let q = b * 16u + 2u * h;\n    acc ^= v4[q] ^ v4[q + 1u] ^ v4[q + 8u] ^ v4[q + 9u];';
const interleavedHome = 'let q = b * 16u + 4u * h;\n    acc ^= v4[q] ^ v4[q + 1u] ^ v4[q + 2u] ^ v4[q + 3u];';
const lockWord = (shift: number) => `acc.x ^= locks[params.buckets + (b >> ${shift}u)];`;

const variants: Record<string, string> = {
  gather4: 'acc.x ^= words[hash_fmix32(i ^ 0x2545f491u) & (params.buckets * 64u - 1u)];',
  'split keys+values+lock': `${splitHome}\n    ${lockWord(0)}`,
  'split keys+values+lock/2': `${splitHome}\n    ${lockWord(1)}`,
  'split keys+values+lock/4': `${splitHome}\n    ${lockWord(2)}`,
  'split keys+values+lock/8': `${splitHome}\n    ${lockWord(3)}`,
  'split keys+lock': `let q = b * 16u + 2u * h;\n    acc ^= v4[q] ^ v4[q + 1u];\n    ${lockWord(0)}`,
  'split keys+values': splitHome,
  'interleaved keys+values+lock': `${interleavedHome}\n    ${lockWord(0)}`,
  'interleaved keys+values': interleavedHome,
  'atomic gather4': 'acc.x ^= atomicLoad(&atomics[hash_fmix32(i ^ 0x2545f491u) & (params.buckets * 64u - 1u)]);',
  'atomic home (8 loads per lane)': `
    let q = b * 64u + 8u * h;
    for (var t = 0u; t < 8u; t++) { acc.x ^= atomicLoad(&atomics[q + t]); }`,
  'plain home (8 loads per lane)': `
    let q = b * 64u + 8u * h;
    for (var t = 0u; t < 8u; t++) { acc.x ^= words[q + t]; }`,
  'atomic line, lane per word': `
    // Lanes of a subgroup of 32 read one random line together (as the WCME scan).
    let lb = hash_fmix32((i >> 5u) ^ 0x51ed27u) & (params.buckets - 1u);
    acc.x ^= atomicLoad(&atomics[lb * 64u + (i & 31u)]);`,
  'plain line, lane per word': `
    let lb = hash_fmix32((i >> 5u) ^ 0x51ed27u) & (params.buckets - 1u);
    acc.x ^= words[lb * 64u + (i & 31u)];`,
  'atomicAnd gather (mask claims)':
    'acc.x ^= atomicAnd(&atomics[hash_fmix32(i ^ 0x2545f491u) & (params.buckets * 64u - 1u)], 0xffffffffu);',
  'atomicStore gather': 'atomicStore(&atomics[hash_fmix32(i ^ 0x2545f491u) & (params.buckets * 64u - 1u)], i);',
  'plain store gather': 'plain[hash_fmix32(i ^ 0x2545f491u) & (params.buckets * 64u - 1u)] = i;',
  // A claim's two stores (value, then key): 128 bytes apart as now, or in one sector (interleaved).
  'store value and key, split': `
    let g = b * 64u + 8u * h;
    atomicStore(&atomics[g + 32u], i);
    atomicStore(&atomics[g], i);`,
  'store value and key, interleaved': `
    let g = b * 64u + 16u * h;
    atomicStore(&atomics[g + 8u], i);
    atomicStore(&atomics[g], i);`,
  'atomicCompareExchangeWeak gather':
    'acc.x ^= atomicCompareExchangeWeak(&atomics[hash_fmix32(i ^ 0x2545f491u) & (params.buckets * 64u - 1u)], 0x12345678u, 0x12345678u).old_value;',
  'atomicAdd on one word, 1 in 32 lanes': 'if ((i & 31u) == 0u) { acc.x ^= atomicAdd(&atomics[0], 0u); }',
  'split key line': `
    let q = b * 16u;
    acc ^= v4[q] ^ v4[q + 1u] ^ v4[q + 2u] ^ v4[q + 3u] ^ v4[q + 4u] ^ v4[q + 5u] ^ v4[q + 6u] ^ v4[q + 7u];`,
  'interleaved key line': `
    let q = b * 16u;
    acc ^= v4[q] ^ v4[q + 1u] ^ v4[q + 4u] ^ v4[q + 5u] ^ v4[q + 8u] ^ v4[q + 9u] ^ v4[q + 12u] ^ v4[q + 13u];`,
};

function kernel(name: string, body: string): Kernel {
  return {
    name: `perf-layout.${name}`,
    workgroupSize: 256,
    source: composeWgsl(
      /* wgsl */ `
struct Params { n: u32, buckets: u32, never: u32, pad: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> v4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> words: array<u32>;
@group(0) @binding(3) var<storage, read> locks: array<u32>;
@group(0) @binding(4) var<storage, read_write> sink: array<u32>;
@group(0) @binding(5) var<storage, read_write> atomics: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> plain: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  var acc = vec4<u32>(0u);
  for (var i = grid_thread(wid, nwg, lid, 256u); i < params.n; i += grid_threads(nwg, 256u)) {
    let r = hash_fmix32(i ^ 0x9e3779b9u);
    let b = r & (params.buckets - 1u);
    let h = r >> 30u;
    ${body}
  }
  let f = acc.x ^ acc.y ^ acc.z ^ acc.w;
  // Every binding used, so one bind group layout serves every variant.
  if (f == params.never) { sink[0] = f + v4[0].x + words[0] + locks[0] + atomicLoad(&atomics[0]) + plain[0]; }
}`,
      { modules: [gridModule, fmix32Module] },
    ),
  };
}

const slots = gpu.createBuffer(BUCKETS * 256, 'perf-layout.slots');
const atomicsBuf = gpu.createBuffer(BUCKETS * 256, 'perf-layout.atomics');
const plainBuf = gpu.createBuffer(BUCKETS * 256, 'perf-layout.plain');
const meta = gpu.createBuffer(BUCKETS * 8, 'perf-layout.meta');
const sink = gpu.createBuffer(16, 'perf-layout.sink');
const init = gpu.device.createCommandEncoder();
gpu.encodeFill(init, slots, 0x12345678, BUCKETS * 64);
gpu.encodeFill(init, atomicsBuf, 0x12345678, BUCKETS * 64);
gpu.encodeFill(init, meta, 0x9abcdef0, BUCKETS * 2);
gpu.submit([init.finish()]);
const params = gpu.uniforms(new Uint32Array([N, BUCKETS, 0xdeadbeef, 0]));
const kernels = Object.entries(variants).map(([name, body]) => ({ name, k: kernel(name, body) }));
const REPS = 5;
const ms = new Map<string, number[]>();
// Warm-up rounds, then REPS timed rounds of every variant, all in one submission each.
for (let round = 0; round < 3 + REPS; round++) {
  const timer = gpu.createTimer(kernels.length);
  const enc = gpu.device.createCommandEncoder();
  for (const { name, k } of kernels) {
    gpu.encodeDispatch(enc, k, { bindings: [params, slots, slots, meta, sink, atomicsBuf, plainBuf], invocations: N }, timer.slot(name));
  }
  timer.resolve(enc);
  gpu.submit([enc.finish()]);
  timer.submitted();
  const t = await timer.read();
  timer.destroy();
  if (round < 3) continue;
  for (const p of t.passes) ms.set(p.label, [...(ms.get(p.label) ?? []), p.ms]);
}
for (const [name, v] of ms) {
  v.sort((a, b) => a - b);
  const med = v[Math.floor(v.length / 2)] ?? 0;
  console.log(
    `${name.padEnd(30)} ${med.toFixed(3)} ms  ${(N / med / 1e6).toFixed(2)} G/s  (min ${v[0]?.toFixed(3)}, max ${v[v.length - 1]?.toFixed(3)})`,
  );
}
