import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, fmix64Module, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { hkvCoreModule, WORKGROUP_SIZE } from './common';

/**
 * Duplicate keys of an insert batch, last occurrence wins. A scratch table of P slots (a power of
 * two, at least 2n) holds, per distinct key, its first claimant (index + 1, by CAS from 0: the key
 * is read back from the batch, so no 64-bit CAS is needed) and the largest index holding it
 * (atomicMax). `scratch` is [owner: P][last: P][pos: n]; the claim pass fills it, the mark pass
 * sets every other occurrence's status to duplicate. Probing is bounded by P > n, so it ends.
 */
const dedupeParams = { n: 'u32', pmask: 'u32' } as const;
const bindings = {
  params: uniform(),
  batch: storage('read', 'u32'),
  scratch: storage('read_write', 'atomic<u32>'),
  out: storage('read_write', 'u32'),
} as const;

export const dedupeClaimKernel = defineKernel({
  name: 'hkv.dedupe_claim',
  workgroupSize: WORKGROUP_SIZE,
  params: dedupeParams,
  bindings,
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

fn key_of(i: u32) -> vec2<u32> { return vec2<u32>(batch[2u * i], batch[2u * i + 1u]); }

${entryPoint(WORKGROUP_SIZE)} {
  let psize = params.pmask + 1u;
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let k = key_of(i);
    var pos = NONE;
    if (!hkv_is_reserved(k)) {
      var p = hkv_hash(k).x & params.pmask;
      for (var step = 0u; step < 2u * psize + 64u; step++) {
        let r = atomicCompareExchangeWeak(&scratch[p], 0u, i + 1u);
        if (r.exchanged || (r.old_value != 0u && all(key_of(r.old_value - 1u) == k))) {
          atomicMax(&scratch[psize + p], i);
          pos = p;
          break;
        }
        // A spurious failure leaves the cell empty: try it again.
        if (r.old_value != 0u) { p = (p + 1u) & params.pmask; }
      }
    }
    atomicStore(&scratch[2u * psize + i], pos);
  }
  _ = out[0];
}
`,
      { modules: [gridModule, hkvCoreModule, fmix64Module] },
    ),
});

export const dedupeMarkKernel = defineKernel({
  name: 'hkv.dedupe_mark',
  workgroupSize: WORKGROUP_SIZE,
  params: dedupeParams,
  bindings,
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE)} {
  let psize = params.pmask + 1u;
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    let pos = atomicLoad(&scratch[2u * psize + i]);
    if (pos != NONE && atomicLoad(&scratch[psize + pos]) != i) { out[OUT_HEAD + i] = ST_DUPLICATE; }
  }
  _ = batch[0];
}
`,
      { modules: [gridModule, hkvCoreModule] },
    ),
});
