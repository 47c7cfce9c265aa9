import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { storage, uniform } from './binding-layout';
import { defineKernel } from './define-kernel';

const WORKGROUP_SIZE = 256;

/** Fills `n` words from word offset `base` with `value`. Used where clearBuffer (zero only) does not fit. */
export const fillKernel = defineKernel({
  name: 'core.fill',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32', value: 'u32', base: 'u32' },
  bindings: { params: uniform(), data: storage('read_write', 'u32') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('i', 'params.n', WORKGROUP_SIZE)} {
    data[params.base + i] = params.value;
  }
}`,
      { modules: [gridModule] },
    ),
}).variant();
