import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeEntryParams, entryPoint, gridModule } from '@gpuhash/kernels';
import { WORKGROUP_SIZE } from './common';
import { listsModule } from './lists';
import { freeModule } from './op-pass';
import { overflowModule } from './overflow';
import { hiveParams } from './params';
import { talliesModule } from './tallies';
import { ERASE_LINES, homeScanModule, lookupLanesModule, wcmeModule } from './wcme';
import { ONE_WINDOW, type SlotWindows, slotsBinding, slotWindows } from './windows';

/**
 * Erase batches: WCME over homes settles most keys (hv_home_lookup), the transposed WCME over
 * buckets finds the others; each key's lane CASes it to EMPTY and sets the free bit. Nothing
 * in an erase batch claims slots, so a slot freed here cannot be reused before the batch ends.
 */
export const eraseKernel = defineKernel({
  name: 'hive.erase',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, ...ONE_WINDOW },
  params: hiveParams,
  bindings: (v: SlotWindows) => ({
    params: uniform(),
    slots: slotsBinding('read_write', 'atomic<u32>', v),
    masks: storage('read_write', 'atomic<u32>'),
    keys: storage('read', 'u32'),
    counters: storage('read_write', 'atomic<u32>'),
    lists: storage('read_write', 'atomic<u32>'),
  }),
  source: (decls, { subgroups, ...w }) =>
    composeWgsl(
      /* wgsl */ `
${decls}

var<workgroup> wg_stash: u32;

${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, 32u);
  if (lid == 0u) { wg_stash = atomicLoad(&counters[C_STASH]); }
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    var key = EMPTY;
    var live_op = false;
    if (i < params.n) {
      key = keys[i];
      if (key >= TOMBSTONE) {
        report_failure(i | RESERVED_FLAG);
      } else {
        live_op = true;
      }
    }
    let b1 = hv_b1(key);
    let b2 = hv_b2(key);
    // The homes first (one sector per key): a key at home, or absent from it with its away and
    // far bits clear, is settled there.
    let home = hv_home_lookup(key, b1, live_op);
    let settled = live_op && home.y == 0u;
    var at = home.x;
    // WCME for the other keys at once: first buckets, then second (when the first has
    // overflowed), then stash lines (when the first sent a key there).
    let found = hv_lookup_lanes(key, live_op && !settled, b1, b2, stash_live, false).at;
    if (!settled) { at = found; }
    if (at != NONE) { hv_free(at, key); }
  }
  flush_tallies(lid);
}
`,
      {
        modules: [
          gridModule,
          homeScanModule(subgroups),
          lookupLanesModule(subgroups, ERASE_LINES),
          wcmeModule(subgroups),
          talliesModule,
          listsModule,
          overflowModule,
          freeModule(subgroups),
        ],
        windows: slotWindows(w, { slots: 'atomic<u32>' }),
      },
    ),
});
