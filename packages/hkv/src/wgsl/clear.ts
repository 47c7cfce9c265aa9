import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { hkvCoreModule, WORKGROUP_SIZE } from './common';

/** Empties `n` slot records of one record buffer: the empty key and score 0, one 16-byte store each. */
export const clearRecordsKernel = defineKernel({
  name: 'hkv.clearRecords',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32' },
  bindings: { params: uniform(), recs: storage('read_write', 'vec4<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    recs[i] = vec4<u32>(EMPTY_LO, KEY_HI_RESERVED, 0u, 0u);
  }
}
`,
      { modules: [gridModule, hkvCoreModule] },
    ),
}).variant();
