import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { defineChecks, expectSameArrays, runKernelOnArrays } from '@gpuhash/testing';
import { bchtSecondBucket, bchtTieToSecond, ENTRIES, ENTRY_BITS, FUNCTIONS, primaryBucket, secondaryBucket, tagOf } from '../src';
import { hortonHashModule } from '../src/wgsl/common';
import { hortonParams } from '../src/wgsl/params';

/**
 * The WGSL hashes against their CPU twins (geometry.ts), on random keys, seeds and table sizes:
 * per key, (primary bucket, tag, BCHT second bucket with its tie bit in bit 31, R_f(primary, tag))
 * with f = 1 + key mod 7 (bucket counts stay under 2^31, so bit 31 of a bucket is free).
 */
const twinsKernel = defineKernel({
  name: 'horton.test.twins',
  workgroupSize: 64,
  params: hortonParams,
  bindings: { params: uniform(), keys: storage('read', 'u32'), out: storage('read_write', 'vec4<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(64)} {
  ${gridStrideLoop('i', 'params.n', 64)} {
    let k = keys[i];
    let x = primary_of(k);
    let t = tag_of(k);
    out[i] = vec4<u32>(x, t, second_of(k) | (u32(tie_to_second(k)) << 31u), secondary_of(x, t, 1u + k % FUNCTIONS));
  }
}
`,
      { modules: [gridModule, hortonHashModule] },
    ),
});

/** `entry_of` and `with_entry` on random remap words: (entry t of w, w with entry t set to e). */
const entriesKernel = defineKernel({
  name: 'horton.test.entries',
  workgroupSize: 64,
  params: hortonParams,
  bindings: { params: uniform(), cases: storage('read', 'vec4<u32>'), out: storage('read_write', 'vec2<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${entryPoint(64)} {
  ${gridStrideLoop('i', 'params.n', 64)} {
    let c = cases[i];
    out[i] = vec2<u32>(entry_of(c.x, c.y), with_entry(c.x, c.y, c.z));
  }
}
`,
      { modules: [gridModule, hortonHashModule] },
    ),
});

export const twinsChecks = defineChecks('horton/twins', [
  {
    name: 'primary_of, tag_of, second_of, tie_to_second and secondary_of match their CPU twins in geometry.ts',
    async run({ gpu, rng, scale }) {
      for (const buckets of [8, 64, 1 << 12, 1 << (10 + rng.below(12))]) {
        for (const seed of [0, rng.u32()]) {
          const n = 4096 * scale;
          const keys = rng.u32Array(n);
          keys.set([0, 1, 0x80000000, 0xfffffffd]);
          const mask = buckets - 1;
          const params = twinsKernel.variant().packParams({ n, mask, seed, epoch: 0, prio_bits: 16 });
          const [, , out] = await runKernelOnArrays(gpu, {
            kernel: twinsKernel.variant(),
            inputs: [params, keys, new Uint32Array(4 * n)],
            uniforms: [0],
            invocations: n,
          });
          const want = new Uint32Array(4 * n);
          for (let i = 0; i < n; i++) {
            const k = keys[i] as number;
            const x = primaryBucket(k, mask, seed);
            const t = tagOf(k, seed);
            const second = (bchtSecondBucket(k, mask, seed) | (bchtTieToSecond(k, seed) ? 0x80000000 : 0)) >>> 0;
            want.set([x, t, second, secondaryBucket(x, t, 1 + (k % FUNCTIONS), mask)], 4 * i);
          }
          expectSameArrays(
            `${buckets} buckets, seed ${seed}: (primary, tag, second, R_f) of key i at 4i (tie bit in second's bit 31)`,
            out as Uint32Array,
            want,
          );
        }
      }
    },
  },
  {
    name: 'entry_of and with_entry read and write one entry of a remap word, leaving the others',
    async run({ gpu, rng, scale }) {
      const n = 4096 * scale;
      const cases = new Uint32Array(4 * n);
      for (let i = 0; i < n; i++)
        cases.set([(rng.u32() & (2 ** (ENTRY_BITS * ENTRIES) - 1)) >>> 0, rng.below(ENTRIES), rng.below(FUNCTIONS + 1), 0], 4 * i);
      const params = entriesKernel.variant().packParams({ n, mask: 0, seed: 0, epoch: 0, prio_bits: 16 });
      const [, , out] = await runKernelOnArrays(gpu, {
        kernel: entriesKernel.variant(),
        inputs: [params, cases, new Uint32Array(2 * n)],
        uniforms: [0],
        invocations: n,
      });
      const want = new Uint32Array(2 * n);
      for (let i = 0; i < n; i++) {
        const [w, t, e] = [cases[4 * i] as number, cases[4 * i + 1] as number, cases[4 * i + 2] as number];
        const fields = Array.from({ length: ENTRIES }, (_, j) => (w >>> (ENTRY_BITS * j)) & FUNCTIONS);
        fields[t] = e;
        want.set([(w >>> (ENTRY_BITS * t)) & FUNCTIONS, fields.reduce((acc, f, j) => (acc | (f << (ENTRY_BITS * j))) >>> 0, 0)], 2 * i);
      }
      expectSameArrays('(entry t of w, w with entry t = e) of case i', out as Uint32Array, want);
    },
  },
]);
