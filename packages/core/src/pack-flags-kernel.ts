import { composeWgsl, entryPoint, gridModule, gridStrideLoop } from '@gpuhash/kernels';
import { storage, uniform } from './binding-layout';
import { defineKernel } from './define-kernel';

const WORKGROUP_SIZE = 256;

/**
 * Packs `n` u32 flags (0 or not) into bytes, four to a word, little-endian: byte i of the packed
 * words is 1 where flag i is set. A host find reads found flags back as a Uint8Array this way, with
 * a quarter of the bytes and no u32-to-u8 pass on the host.
 */
export const packFlagsKernel = defineKernel({
  name: 'core.pack-flags',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32' },
  bindings: { params: uniform(), flags: storage('read', 'u32'), packed: storage('read_write', 'u32') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE)} {
  ${gridStrideLoop('w', '(params.n + 3u) / 4u', WORKGROUP_SIZE)} {
    var word = 0u;
    for (var b = 0u; b < 4u; b++) {
      let i = 4u * w + b;
      if (i < params.n && flags[i] != 0u) { word |= 1u << (8u * b); }
    }
    packed[w] = word;
  }
}`,
      { modules: [gridModule] },
    ),
}).variant();
