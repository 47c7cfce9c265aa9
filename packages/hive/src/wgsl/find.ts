import type { Kernel } from '@gpuhash/core';
import { composeWgsl, cooperativeEntryParams, gridModule } from '@gpuhash/kernels';
import { cachedKernel, chunkLoop, entryPoint } from './kernel-cache';
import { lookupModule } from './wcme';

/**
 * Find batches: WCME over the read-only view of the table (plain 8-byte loads, which the cache
 * serves), first bucket, then second, then the stash line while the stash holds keys.
 * Bindings: params, slots_ro, keys, out_values, out_found, counters (read).
 */
export function findKernel(subgroups: boolean): Kernel {
  return cachedKernel('find', subgroups ? 'sg' : 'fb', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots_ro: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> out_values: array<u32>;
@group(0) @binding(4) var<storage, read_write> out_found: array<u32>;
@group(0) @binding(5) var<storage, read> counters: array<u32>;

var<workgroup> wg_stash: u32;

${entryPoint(cooperativeEntryParams({ subgroups }))} {
  cg_init(cg_sg_lane, cg_sg_size);
  if (lid == 0u) { wg_stash = counters[C_STASH]; }
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  ${chunkLoop('params.n')} {
    let i = base + lid;
    var key = EMPTY;
    var b1 = 0u;
    var b2 = 0u;
    if (i < params.n) {
      key = keys[i];
      b1 = hv_b1(key);
      b2 = hv_b2(key);
    }
    var found = vec2<u32>(0u, 0u);
    // Reserved keys (device batches are not validated for finds) are never found.
    var todo = cg_ballot(i < params.n && key < TOMBSTONE);
    loop {
      if (cg_mask_empty(todo)) { break; }
      let leader = cg_first_lane(todo);
      todo &= ~cg_mask_lane(leader);
      let k = cg_broadcast(key, leader);
      let c1 = cg_broadcast(b1, leader);
      let c2 = cg_broadcast(b2, leader);
      var r = hv_lookup(c1, k);
      if (r.y == 0u && c2 != c1) { r = hv_lookup(c2, k); }
      if (r.y == 0u && stash_live) { r = hv_lookup(hv_stash_bucket(k), k); }
      if (cg_lane() == leader) { found = r; }
    }
    if (i < params.n) {
      out_values[i] = found.x;
      out_found[i] = found.y;
    }
  }
}
`,
      { modules: [gridModule, lookupModule(subgroups)] },
    ),
  );
}
