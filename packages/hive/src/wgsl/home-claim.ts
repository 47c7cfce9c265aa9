import { defineKernel } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeEntryParams, entryPoint, gridModule } from '@gpuhash/kernels';
import { WORKGROUP_SIZE } from './common';
import { listsModule } from './lists';
import { opPassBindings, opPassWindows, pushWorkgroupModule } from './op-pass';
import { hiveParams } from './params';
import { talliesModule } from './tallies';
import { ONE_WINDOW } from './windows';

/**
 * The claim pass of a mixed batch, between the home pass and pass A: the inserts the home pass
 * found absent from their home with their filter bits clear (so absent from the table) and whose
 * home had EMPTY key words (\`out[i].x\`, bits from the home's first slot). Each takes the first of
 * those words that is still EMPTY by a CAS from EMPTY to its key, then stores its value and clears
 * the slot's free bit; with none left it goes to the rest list, for pass A.
 *
 * This departs from WABC (claim the free bit, store the value, then publish the key once every
 * earlier claim is published): the CAS claims and publishes at once, so nothing waits. It stays
 * free of duplicates because every op of one key tries the same words in the same order, and no
 * key word turns EMPTY from the home pass's scan to the end of this pass (erases retire to
 * TOMBSTONE and are freed by the release pass): of two ops of a key, the later CAS fails on the
 * earlier one's key, and that op is done, as an insert that found its key. Nothing here claims by
 * the free bits and nothing reads a value (finds ran in the batch's first dispatch; pass A, which
 * claims by the free bits, comes after), so neither a key before its value nor a free bit left set
 * after its key can be seen.
 */
export const homeClaimKernel = defineKernel({
  name: 'hive.home-claim',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, ...ONE_WINDOW },
  params: hiveParams,
  bindings: opPassBindings,
  source: (decls, { subgroups, ...w }) =>
    composeWgsl(
      /* wgsl */ `
${decls}

var<workgroup> wg_listed: u32;

/**
 * Claims for key the first of its home's words in \`empties\` (bits from global slot \`first\`, in
 * slot order) still EMPTY: x the global slot now holding key (NONE: none left), y 1 when this op
 * wrote it, 0 when another op of the batch did.
 */
fn hv_home_claim(first: u32, empties: u32, key: u32) -> vec2<u32> {
  var e = empties;
  var out = vec2<u32>(NONE, 0u);
  while (e != 0u && out.x == NONE) {
    let g = first + firstTrailingBit(e);
    e &= e - 1u;
    loop {
      let r = atomicCompareExchangeWeak(&slots[hv_kw(g)], EMPTY, key);
      if (r.exchanged) {
        out = vec2<u32>(g, 1u);
      } else if (r.old_value == key) {
        out = vec2<u32>(g, 0u);
      } else if (r.old_value == EMPTY) {
        continue;
      }
      break;
    }
  }
  return out;
}

${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, 32u);
  if (lid == 0u) { wg_listed = min(atomicLoad(&lists[L_CLAIM]), params.list_cap); }
  let list_len = workgroupUniformLoad(&wg_listed);
  ${chunkLoop('min(params.n, list_len)', WORKGROUP_SIZE)} {
    let j = base + lid;
    var i = 0u;
    var rest = false;
    if (j < list_len) {
      i = atomicLoad(&lists[LIST_HEADER + L_CLAIM * params.list_cap + j]);
      let key = keys[i];
      let op = ops[i];
      let b1 = hv_b1(key);
      let c = hv_home_claim(b1 * 32u + hv_home(key) * HOME_SLOTS, out[i].x, key);
      if (c.x == NONE) {
        rest = true;
      } else {
        var status = 0u;
        if (c.y == 1u || op == OP_INSERT_OR_ASSIGN) { atomicStore(&slots[hv_vw(c.x)], values[i]); }
        if (c.y == 1u) {
          atomicAnd(&masks[b1], ~(1u << (c.x % 32u)));
          count(T_ADDED, 1u);
          status = 1u;
        }
        out[i] = vec2<u32>(0u, status);
      }
    }
    hv_push_workgroup(vec3<u32>(L_REST, L_REST, L_REST), vec3<bool>(rest, false, false), vec3<u32>(i), lid);
  }
  flush_tallies(lid);
}
`,
      { modules: [gridModule, pushWorkgroupModule(subgroups), talliesModule, listsModule], windows: opPassWindows(w) },
    ),
});
