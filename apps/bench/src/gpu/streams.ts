import type { Gpu, Kernel } from '@gpuhash/core';
import { composeWgsl, fmix32Module, gridModule, wgslModule } from '@gpuhash/kernels';

/**
 * Key streams generated on the GPU (2^27 keys would be 512 MB of host arrays per stream): element
 * i of a stream has index j = start + i (or start + a Zipf-distributed rank), key fmix32(2j+1)
 * (fmix32(2j+2) for misses), with the three reserved images replaced, and value bench_value(j).
 * CPU twins and the proof that keys stay unique, disjoint and unreserved: ../keys.ts.
 */
export interface StreamSpec {
  /** Elements in the stream. */
  n: number;
  /** First key index. */
  start: number;
  /** Miss keys (never inserted) instead of hit keys. */
  miss?: boolean;
  /** Indices start + rank, rank in [0, range) drawn Zipf(s) (rank 0 hottest); absent = sequential. */
  zipf?: { s: number; range: number; seed: number };
}

/** What the answers to a batch of finds must be: a hit key of index j is found iff from <= j < to. */
export interface FindExpectation {
  n: number;
  foundFrom: number;
  foundTo: number;
}

export const WORKGROUP = 256;

/**
 * Keys, values and the way back from a key to its index: fmix32 is a bijection, so the checks
 * invert it and need no copy of the stream that produced the queries. A reserved image r
 * (>= 0xfffffffd) is replaced by fmix32(2r + 2), the image of an even number past the miss
 * stream's end (../keys.ts), and \`key_index\` maps it back.
 */
export const benchKeysModule = wgslModule(
  'bench.keys',
  /* wgsl */ `
fn bench_key(j: u32, miss: u32) -> u32 {
  let k = hash_fmix32(2u * j + 1u + miss);
  if (k >= 0xfffffffdu) { return hash_fmix32(2u * k + 2u); }
  return k;
}
fn bench_value(j: u32) -> u32 { return j * 0x9e3779b1u + 0x7f4a7c15u; }
fn unshift_xor(h: u32, s: u32) -> u32 {
  var x = h;
  for (var k = 0u; k <= 32u / s; k += 1u) { x = h ^ (x >> s); }
  return x;
}
fn hash_fmix32_inverse(h: u32) -> u32 {
  var x = unshift_xor(h, 16u);
  x *= 0x7ed1b41du;
  x = unshift_xor(x, 13u);
  x *= 0xa5cb9243u;
  return unshift_xor(x, 16u);
}
// x = 1 for a hit key (fmix32 of an odd number), y = its index j (for a miss key, j - 1/2).
fn key_index(key: u32) -> vec2<u32> {
  var x = hash_fmix32_inverse(key);
  // A replacement of a reserved image r: x = 2r + 2 for r in 0xfffffffd..0xffffffff.
  if ((x & 1u) == 0u && x + 4u <= 4u) { x = hash_fmix32_inverse(((x - 2u) >> 1u) | 0x80000000u); }
  return vec2<u32>(x & 1u, (x - 1u) >> 1u);
}
`,
  [fmix32Module],
);

/** The entry point line every bench kernel shares (grid-stride over a 2-D dispatch). */
export const computeEntry = /* wgsl */ `@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>)`;

/** The grid-stride loop header over `bound` items. */
export function gridLoop(bound: string): string {
  return `for (var i = grid_thread(wid, nwg, lid, ${WORKGROUP}u); i < ${bound}; i += grid_threads(nwg, ${WORKGROUP}u))`;
}

function generateKernel(withValues: boolean): Kernel {
  return {
    name: 'bench.generate-keys',
    cacheKey: `values=${withValues}`,
    workgroupSize: WORKGROUP,
    source: composeWgsl(
      /* wgsl */ `
struct Stream {
  n: u32, start: u32, miss: u32, zipf: u32,
  zipf_a: f32, zipf_inv: f32, zipf_ln: f32, zipf_range: u32,
  seed: u32, _p0: u32, _p1: u32, _p2: u32,
}
@group(0) @binding(0) var<uniform> stream: Stream;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
${withValues ? '@group(0) @binding(2) var<storage, read_write> values: array<u32>;' : ''}

// A uniform float in (0, 1) from an index.
fn unit_float(i: u32) -> f32 { return (f32(hash_fmix32(i ^ stream.seed) >> 8u) + 0.5) / 16777216.0; }
// Inverse CDF of the continuous Zipf law on [1, range + 1).
fn zipf_rank(i: u32) -> u32 {
  let u = unit_float(i);
  var x: f32;
  if (stream.zipf == 2u) { x = exp(u * stream.zipf_ln); } else { x = pow(stream.zipf_a * u + 1.0, stream.zipf_inv); }
  return min(u32(max(x, 1.0)) - 1u, stream.zipf_range - 1u);
}

${computeEntry} {
  ${gridLoop('stream.n')} {
    var j = stream.start + i;
    if (stream.zipf != 0u) { j = stream.start + zipf_rank(i); }
    keys[i] = bench_key(j, stream.miss);
    ${withValues ? 'values[i] = bench_value(j);' : ''}
  }
}`,
      { modules: [gridModule, benchKeysModule] },
    ),
  };
}

const verifyFindKernel: Kernel = {
  name: 'bench.verify-find',
  workgroupSize: WORKGROUP,
  source: composeWgsl(
    /* wgsl */ `
struct Expect { n: u32, found_from: u32, found_to: u32, _p: u32 }
@group(0) @binding(0) var<uniform> expect: Expect;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> out_values: array<u32>;
@group(0) @binding(3) var<storage, read> out_found: array<u32>;
// errors[0]: wrong answers; errors[1]: the lowest index with a wrong answer.
@group(0) @binding(4) var<storage, read_write> errors: array<atomic<u32>>;
${computeEntry} {
  var bad = 0u;
  var first = 0xffffffffu;
  ${gridLoop('expect.n')} {
    let k = key_index(keys[i]);
    let want = k.x == 1u && k.y >= expect.found_from && k.y < expect.found_to;
    let found = out_found[i] != 0u;
    if (found != want || (want && out_values[i] != bench_value(k.y))) {
      bad += 1u;
      first = min(first, i);
    }
  }
  if (bad != 0u) {
    atomicAdd(&errors[0], bad);
    atomicMin(&errors[1], first);
  }
}`,
    { modules: [gridModule, benchKeysModule] },
  ),
};

function streamUniforms(gpu: Gpu, spec: StreamSpec): GPUBuffer {
  const words = new Uint32Array(12);
  const floats = new Float32Array(words.buffer);
  words[0] = spec.n;
  words[1] = spec.start;
  words[2] = spec.miss ? 1 : 0;
  if (spec.zipf) {
    const { s, range, seed } = spec.zipf;
    // s = 1 is the limit of the general formula; it has its own closed form.
    const harmonic = Math.abs(s - 1) < 1e-6;
    words[3] = harmonic ? 2 : 1;
    floats[4] = harmonic ? 0 : (range + 1) ** (1 - s) - 1;
    floats[5] = harmonic ? 0 : 1 / (1 - s);
    floats[6] = Math.log(range + 1);
    words[7] = range;
    words[8] = seed;
  }
  return gpu.uniforms(words);
}

/** Records a pass writing a stream's keys (and values, when given a buffer) into buffers of >= n u32. */
export function encodeGenerate(gpu: Gpu, encoder: GPUCommandEncoder, spec: StreamSpec, keys: GPUBuffer, values?: GPUBuffer): void {
  if (spec.n === 0) return;
  const params = streamUniforms(gpu, spec);
  const bindings = values ? [params, keys, values] : [params, keys];
  gpu.encodeDispatch(encoder, generateKernel(values !== undefined), { bindings, invocations: spec.n, label: 'bench.generate-keys' });
  gpu.pool.release(params);
}

/** A wrong-answer count and the first wrong index (-1 when none). */
export interface Verdict {
  wrong: number;
  firstWrong: number;
}

/**
 * Runs a check kernel whose last binding is the errors buffer ([count, first index]) and reads
 * the verdict back.
 */
export async function runCheck(gpu: Gpu, kernel: Kernel, n: number, bindings: Array<GPUBuffer>, params: Uint32Array): Promise<Verdict> {
  if (n === 0) return { wrong: 0, firstWrong: -1 };
  return gpu.run(kernel.name, async () => {
    const errors = gpu.createBuffer(8, 'bench.check.errors');
    gpu.write(errors, new Uint32Array([0, 0xffffffff]));
    const uniforms = gpu.uniforms(params);
    const encoder = gpu.device.createCommandEncoder({ label: kernel.name });
    gpu.encodeDispatch(encoder, kernel, { bindings: [uniforms, ...bindings, errors], invocations: n, maxWorkgroups: 4096 });
    gpu.pool.release(uniforms);
    gpu.submit([encoder.finish()]);
    const words = new Uint32Array(await gpu.readBytes(errors, 0, 8));
    errors.destroy();
    const wrong = words[0] ?? 0;
    return { wrong, firstWrong: wrong === 0 ? -1 : (words[1] ?? 0) };
  });
}

/** Checks the answers of n finds of `keys` on the GPU. */
export function verifyFind(
  gpu: Gpu,
  expect: FindExpectation,
  keys: GPUBuffer,
  outValues: GPUBuffer,
  outFound: GPUBuffer,
): Promise<Verdict> {
  const params = new Uint32Array([expect.n, expect.foundFrom, expect.foundTo, 0]);
  return runCheck(gpu, verifyFindKernel, expect.n, [keys, outValues, outFound], params);
}
