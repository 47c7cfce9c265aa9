import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { storage, uniform } from './binding-layout';
import { defineKernel } from './define-kernel';

const WORKGROUP_SIZE = 256;

/**
 * Counts the words of a batch at or above `first` (the table's first reserved key) into
 * `count[0]`: a large host batch of u32 keys is checked on the GPU after its upload, so the host
 * spends no pass over it (a JavaScript scan of 67M keys took 170-280 ms on an H100 host); only a batch the count
 * refuses is scanned on the host, for the indices its error names. The atomic runs only on a hit.
 */
export const countReservedKernel = defineKernel({
  name: 'core.count-reserved',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32', first: 'u32' },
  bindings: { params: uniform(), words: storage('read', 'u32'), count: storage('read_write', 'atomic<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    if (words[i] >= params.first) { atomicAdd(&count[0], 1u); }
  }
}`,
      { modules: [gridModule] },
    ),
}).variant();
