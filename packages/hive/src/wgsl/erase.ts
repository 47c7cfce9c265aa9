import type { Kernel } from '@gpuhash/core';
import { composeWgsl, cooperativeEntryParams, gridModule } from '@gpuhash/kernels';
import { cachedKernel, chunkLoop, entryPoint } from './kernel-cache';
import { talliesModule } from './tallies';
import { wcmeModule } from './wcme';

/**
 * Erase batches: WCME finds the key, the winner CASes it to EMPTY and sets the free bit. Nothing
 * in an erase batch claims slots, so a slot freed here cannot be reused before the batch ends.
 * Bindings: params, slots, masks, keys, counters, lists.
 */
export function eraseKernel(subgroups: boolean): Kernel {
  return cachedKernel('erase', subgroups ? 'sg' : 'fb', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> slots: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> masks: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> lists: array<atomic<u32>>;

var<workgroup> wg_stash: u32;

${entryPoint(cooperativeEntryParams({ subgroups }))} {
  cg_init(cg_sg_lane, cg_sg_size);
  if (lid == 0u) { wg_stash = atomicLoad(&counters[C_STASH]); }
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  ${chunkLoop('params.n')} {
    let i = base + lid;
    var key = EMPTY;
    var b1 = 0u;
    var b2 = 0u;
    var live_op = false;
    if (i < params.n) {
      key = keys[i];
      if (key >= TOMBSTONE) {
        report_failure(i | RESERVED_FLAG);
      } else {
        b1 = hv_b1(key);
        b2 = hv_b2(key);
        live_op = true;
      }
    }
    var todo = cg_ballot(live_op);
    loop {
      if (cg_mask_empty(todo)) { break; }
      let leader = cg_first_lane(todo);
      todo &= ~cg_mask_lane(leader);
      let k = cg_broadcast(key, leader);
      let c1 = cg_broadcast(b1, leader);
      let c2 = cg_broadcast(b2, leader);
      var at = NONE;
      let s1 = hv_find_slot(c1, k);
      if (s1 != NONE) { at = c1 * 32u + s1; }
      if (at == NONE && c2 != c1) {
        let s2 = hv_find_slot(c2, k);
        if (s2 != NONE) { at = c2 * 32u + s2; }
      }
      if (at == NONE && stash_live) {
        let line = hv_stash_bucket(k);
        let ss = hv_find_slot(line, k);
        if (ss != NONE) { at = line * 32u + ss; }
      }
      if (cg_lane() == leader && at != NONE && hv_cas_key(at, key, EMPTY)) {
        atomicOr(&masks[at / 32u], 1u << (at % 32u));
        count(T_ERASED, 1u);
        if (at >= params.nalloc * 32u) { count(T_STASH_OUT, 1u); }
      }
    }
  }
  flush_tallies(lid);
}
`,
      { modules: [gridModule, wcmeModule(subgroups), talliesModule] },
    ),
  );
}
