import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { defineChecks, expectSameArrays, runKernelOnArrays } from '@gpuhash/testing';
import { bucket2Of, bucketOf, digestOf, EMPTY_DIGEST, hashByteOf, isReservedKey, keyHash, startWordOf } from '../src';
import { hkvCoreModule } from '../src/wgsl/common';

const WG = 64;

/** The layout's WGSL (hash, bucket, start word, digest, reserved keys) against its CPU twins, bit for bit. */
export const twinChecks = defineChecks('hkv/twins', [
  {
    name: 'hash, bucket, start word, digest and reserved-key test match their CPU twins',
    async run({ gpu, rng, scale }) {
      const n = 4096 * scale;
      const buckets = 1 << (1 + rng.below(20));
      const keys = new Uint32Array(2 * n);
      const edges = [0, 1, 0xfffffffd, 0xfffffffe, 0xffffffff, 0x80000000];
      for (let i = 0; i < n; i++) {
        keys[2 * i] = i < 36 ? (edges[i % 6] as number) : rng.u32();
        keys[2 * i + 1] = i < 36 ? (edges[Math.floor(i / 6)] as number) : rng.u32();
      }
      // Keys whose hash byte is the empty slots' digest take another digest: the input must hold some (about 1 in 256).
      for (const dual of [false, true]) {
        const clashes = Array.from({ length: n }, (_, i) => hashByteOf(keys[2 * i] as number, keys[2 * i + 1] as number, dual));
        if (!clashes.includes(EMPTY_DIGEST))
          throw new Error(
            `no key of ${n} has hash byte ${EMPTY_DIGEST} (${dual ? 'dual' : 'single'} mode): the digest remap goes unchecked`,
          );
      }
      const kernel = {
        name: 'hkv.check.twins',
        workgroupSize: WG,
        source: composeWgsl(
          /* wgsl */ `
struct Params { n: u32, mask: u32, _p0: u32, _p1: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
${entryPoint(WG)} {
  ${gridStrideLoop('i', 'params.n', WG)} {
    let k = keys[i];
    let h = hkv_hash(k);
    out[6u * i] = h.x;
    out[6u * i + 1u] = h.y;
    out[6u * i + 2u] = hkv_bucket(h, params.mask);
    out[6u * i + 3u] = hkv_start_word(h) | (hkv_bucket2(h, params.mask, hkv_bucket(h, params.mask)) << 8u);
    out[6u * i + 4u] = hkv_digest(h) | (hkv_dual_digest(h) << 8u);
    out[6u * i + 5u] = select(0u, 1u, hkv_is_reserved(k)) | select(0u, 2u, hkv_is_free(k));
  }
}
`,
          { modules: [gridModule, hkvCoreModule] },
        ),
      };
      const [, , got] = await runKernelOnArrays(gpu, {
        kernel,
        inputs: [new Uint32Array([n, buckets - 1, 0, 0]), keys, new Uint32Array(6 * n)],
        uniforms: [0],
        invocations: n,
        maxWorkgroups: Math.max(1, Math.ceil(n / WG / 3)),
      });
      const want = new Uint32Array(6 * n);
      for (let i = 0; i < n; i++) {
        const lo = keys[2 * i] as number;
        const hi = keys[2 * i + 1] as number;
        const [hl, hh] = keyHash(lo, hi);
        const free = hi === 0xffffffff && lo >= 0xfffffffe;
        want.set(
          [
            hl,
            hh,
            bucketOf(lo, hi, buckets),
            (startWordOf(lo, hi) | (bucket2Of(lo, hi, buckets) << 8)) >>> 0,
            digestOf(lo, hi) | (digestOf(lo, hi, true) << 8),
            (isReservedKey(lo, hi) ? 1 : 0) | (free ? 2 : 0),
          ],
          6 * i,
        );
      }
      const lanes = ['hash lo', 'hash hi', 'bucket', 'start word | bucket2 << 8', 'digest | dual digest << 8', 'reserved | free << 1'];
      lanes.forEach((name, j) => {
        const pick = (a: Uint32Array) => Uint32Array.from({ length: n }, (_, i) => a[6 * i + j] as number);
        expectSameArrays(name, pick(got as Uint32Array), pick(want), {
          lo: Uint32Array.from({ length: n }, (_, i) => keys[2 * i] as number),
        });
      });
    },
  },
]);
