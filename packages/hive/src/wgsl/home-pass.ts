import { defineKernel } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeEntryParams, entryPoint, gridModule } from '@gpuhash/kernels';
import { WORKGROUP_SIZE } from './common';
import { listsModule } from './lists';
import { freeModule, opPassBindings, opPassWindows, pushWorkgroupModule } from './op-pass';
import { hiveParams } from './params';
import { talliesModule } from './tallies';
import { homeScanModule, wcmeModule } from './wcme';
import { ONE_WINDOW } from './windows';

/**
 * The home pass of a mixed batch, before pass A: the ops whose key's home settles them. The group
 * reads its ops' homes together (\`hv_home_lookup\`, wcme.ts: 4 key words, half a 32-byte sector,
 * per op, where pass A's scan reads the whole bucket), each lane also its first bucket's lock word:
 * - the key at home: an erase frees its slot at once (\`hv_free\`, as erase batches do: nothing in
 *   this dispatch claims a slot, and pass A, which claims, runs after it), an insertOrAssign
 *   stores its value (a value stored into a slot an erase just freed is overwritten by whoever
 *   claims the slot next, before it publishes its key);
 * - an erase of a key absent from home whose away and far bits are clear (common.ts): the key is
 *   nowhere, nothing to do;
 * - anything else goes to the rest list, whole, for pass A in its listed mode: every insert, the
 *   insertOrAssigns of keys absent from home (their claims, WABC), keys that may live elsewhere,
 *   reserved keys and unknown ops (pass A reports them).
 * Claims stay in pass A. Made here, by WABC or by a CAS that writes the key, they doubled this
 * pass, also at load 0.95 where few ops claim; in a pass of their own, by the CAS, they cost what
 * pass A's claims cost, scan included (H100, 2^27 slots, a 2^22-op 0.5:0.3:0.2 batch; see
 * apps/bench/results/hive-design-history.md).
 * Same bindings as pass A (ops and out real: mixed batches only); aux1 the chunk's first batch
 * index. The finds ran before (find.ts).
 */
export const homePassKernel = defineKernel({
  name: 'hive.home-pass',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, ...ONE_WINDOW },
  params: hiveParams,
  bindings: opPassBindings,
  source: (decls, { subgroups, ...w }) =>
    composeWgsl(
      /* wgsl */ `
${decls}

${entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, 32u);
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let local = base + lid;
    let i = params.aux1 + local;
    let live = local < params.n;
    var op = OP_FIND;
    var key = EMPTY;
    if (live) {
      key = keys[i];
      op = ops[i];
    }
    // Everything pass A must see: reserved keys and unknown ops (it reports them), inserts, and
    // below, ops their home does not settle. An insert goes straight on: it is expected to bring a
    // new key, which its home cannot settle, and reading the home only to forward it cost a 2^22-op
    // batch at load 0.5 0.09 ms (H100). insertOrAssign, often of present keys, looks at home first.
    var rest = live && (key >= TOMBSTONE || op > OP_ERASE || op == OP_INSERT);
    let go = live && !rest && op != OP_FIND;
    var status = 0u;
    var done = false;
    let home = hv_home_lookup(key, hv_b1(key), go);
    if (go) {
      if (home.x != NONE) {
        let at = home.x;
        if (op == OP_ERASE) {
          if (hv_free(at, key)) { status = 1u; }
        } else if (op == OP_INSERT_OR_ASSIGN) {
          atomicStore(&slots[hv_vw(at)], values[i]);
        }
        done = true;
      } else if (op == OP_ERASE && home.y == 0u) {
        // Absent from its home, and its filter bits say from everywhere else.
        done = true;
      } else {
        rest = true;
      }
    }
    // The rest to pass A: one list reservation per workgroup.
    hv_push_workgroup(vec2<u32>(L_REST, L_REST), vec2<bool>(rest, false), vec2<u32>(i), lid);
    if (done) { out[i] = vec2<u32>(0u, status); }
  }
  flush_tallies(lid);
}
`,
      {
        modules: [
          gridModule,
          homeScanModule(subgroups),
          wcmeModule(subgroups),
          pushWorkgroupModule(subgroups),
          freeModule(subgroups),
          talliesModule,
          listsModule,
        ],
        windows: opPassWindows(w),
      },
    ),
});
