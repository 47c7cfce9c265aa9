import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { commonModule } from './common';
import { cachedKernel, entryPoint, gridLoop } from './kernel-cache';

/**
 * The find filters: each table bucket's lock word folded to 16 bits (`hv_find_filter`), two per
 * word, rewritten before every find pass. A find reads its key's home, the home's values and the
 * bucket's filter word in one round trip; from a 16 MB array of lock words (2^27 slots) that word
 * cost a third of the round trip on an H200, where an 8 MB array stays in the L2 far more
 * (perf-layout: 7.96 against 7.39 ms for 2^27 such round trips, 5.79 without the word). Folding
 * costs misses: more of them see a bit another key set and read on. Bindings: params (n = words,
 * nalloc), masks (the meta buffer, read), filters (out).
 */
export function findFiltersKernel(): Kernel {
  return cachedKernel('find-filters', '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> masks: array<u32>;
@group(0) @binding(2) var<storage, read_write> filters: array<u32>;
${entryPoint()} {
  ${gridLoop('w', 'params.n')} {
    let b = 2u * w;
    var lo = 0u;
    var hi = 0u;
    if (b < params.nalloc) { lo = hv_find_filter(masks[params.lock_base + b]); }
    if (b + 1u < params.nalloc) { hi = hv_find_filter(masks[params.lock_base + b + 1u]); }
    filters[w] = lo | (hi << 16u);
  }
}`,
      { modules: [gridModule, commonModule] },
    ),
  );
}

/** Words of the find filters of a table of nalloc buckets. */
export function findFilterWords(nalloc: number): number {
  return Math.ceil(nalloc / 2);
}
