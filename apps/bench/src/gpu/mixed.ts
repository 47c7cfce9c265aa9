import type { Gpu, Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { BenchOp } from '../tables/types';
import { benchKeysModule, computeEntry, gridLoop, runCheck, type Verdict, WORKGROUP } from './streams';

/**
 * One mixed batch: counts of each kind of op and where their key indices start. Inserts add new
 * keys; erases, hits and misses use disjoint key ranges, so every answer is determined no matter
 * how the ops interleave on the GPU.
 */
export interface MixedBatch {
  inserts: number;
  insertStart: number;
  erases: number;
  eraseStart: number;
  hits: number;
  hitStart: number;
  misses: number;
  missStart: number;
  seed: number;
}

export function batchSize(b: MixedBatch): number {
  return b.inserts + b.erases + b.hits + b.misses;
}

// The ops of a batch are spread over it by a bijection on [0, 2^bits) (xor-shift-multiply rounds,
// each invertible modulo 2^bits), walked until it lands in [0, n): op kinds are interleaved at
// random within every subgroup, as in SlabHash's concurrent benchmark, and still come in exact counts.
const mixModuleCode = /* wgsl */ `
struct Mix {
  n: u32, mask: u32, shift: u32, seed: u32,
  inserts: u32, erases: u32, hits: u32, misses: u32,
  insert_start: u32, erase_start: u32, hit_start: u32, miss_start: u32,
}
@group(0) @binding(0) var<uniform> mix: Mix;
fn mix_round(x: u32, r: u32) -> u32 {
  var h = (x ^ (mix.seed + r * 0x9e3779b9u)) & mix.mask;
  h ^= h >> mix.shift;
  h = (h * 0x2c1b3c6du) & mix.mask;
  h ^= h >> mix.shift;
  return h;
}
fn mix_permute(i: u32) -> u32 {
  var p = i;
  loop {
    p = mix_round(mix_round(mix_round(p, 0u), 1u), 2u);
    if (p < mix.n) { return p; }
  }
}
`;

const generateKernel: Kernel = {
  name: 'bench.generate-mixed',
  workgroupSize: WORKGROUP,
  source: composeWgsl(
    /* wgsl */ `
${mixModuleCode}
@group(0) @binding(1) var<storage, read_write> ops: array<u32>;
@group(0) @binding(2) var<storage, read_write> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> values: array<u32>;
${computeEntry} {
  ${gridLoop('mix.n')} {
    let p = mix_permute(i);
    var op = ${BenchOp.find}u;
    var j = 0u;
    var miss = 0u;
    if (p < mix.inserts) {
      op = ${BenchOp.insert}u; j = mix.insert_start + p;
    } else if (p < mix.inserts + mix.erases) {
      op = ${BenchOp.erase}u; j = mix.erase_start + (p - mix.inserts);
    } else if (p < mix.inserts + mix.erases + mix.hits) {
      j = mix.hit_start + (p - mix.inserts - mix.erases);
    } else {
      j = mix.miss_start + (p - mix.inserts - mix.erases - mix.hits); miss = 1u;
    }
    ops[i] = op;
    keys[i] = bench_key(j, miss);
    values[i] = bench_value(j);
  }
}`,
    { modules: [gridModule, benchKeysModule] },
  ),
};

const verifyKernel: Kernel = {
  name: 'bench.verify-mixed',
  workgroupSize: WORKGROUP,
  source: composeWgsl(
    /* wgsl */ `
struct Expect { n: u32, _p0: u32, _p1: u32, _p2: u32 }
@group(0) @binding(0) var<uniform> expect: Expect;
@group(0) @binding(1) var<storage, read> ops: array<u32>;
@group(0) @binding(2) var<storage, read> keys: array<u32>;
@group(0) @binding(3) var<storage, read> out: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> errors: array<atomic<u32>>;
${computeEntry} {
  var bad = 0u;
  var first = 0xffffffffu;
  ${gridLoop('expect.n')} {
    let r = out[i];
    var ok = r.y == 1u;
    if (ops[i] == ${BenchOp.find}u) {
      let k = key_index(keys[i]);
      // A hit key of a mixed batch is never erased in it; a miss key was never inserted.
      ok = select(r.y == 0u, r.y == 1u && r.x == bench_value(k.y), k.x == 1u);
    }
    if (!ok) {
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

function mixUniforms(batch: MixedBatch): Uint32Array {
  const n = batchSize(batch);
  const bits = Math.max(1, Math.ceil(Math.log2(Math.max(2, n))));
  const mask = bits >= 32 ? 0xffffffff : 2 ** bits - 1;
  return new Uint32Array([
    n,
    mask,
    Math.max(1, bits >> 1),
    batch.seed,
    batch.inserts,
    batch.erases,
    batch.hits,
    batch.misses,
    batch.insertStart,
    batch.eraseStart,
    batch.hitStart,
    batch.missStart,
  ]);
}

/** Records a pass writing a mixed batch's ops, keys and values (buffers of >= its size in u32). */
export function encodeGenerateMixed(
  gpu: Gpu,
  encoder: GPUCommandEncoder,
  batch: MixedBatch,
  ops: GPUBuffer,
  keys: GPUBuffer,
  values: GPUBuffer,
): void {
  const n = batchSize(batch);
  if (n === 0) return;
  const params = gpu.uniforms(mixUniforms(batch));
  gpu.encodeDispatch(encoder, generateKernel, { bindings: [params, ops, keys, values], invocations: n, label: 'bench.generate-mixed' });
  gpu.pool.release(params);
}

/** Checks a mixed batch's (value, status) answers on the GPU. */
export function verifyMixed(gpu: Gpu, n: number, ops: GPUBuffer, keys: GPUBuffer, out: GPUBuffer): Promise<Verdict> {
  return runCheck(gpu, verifyKernel, n, [ops, keys, out], new Uint32Array([n, 0, 0, 0]));
}
