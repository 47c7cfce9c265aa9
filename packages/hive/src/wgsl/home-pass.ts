import { defineKernel } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeEntryParams, entryPoint, gridModule } from '@gpuhash/kernels';
import { WORKGROUP_SIZE } from './common';
import { listsModule } from './lists';
import { opPassBindings, opPassWindows, pushGroupModule, retireModule } from './op-pass';
import { hiveParams } from './params';
import { talliesModule } from './tallies';
import { homeScanModule, wcmeModule } from './wcme';
import { ONE_WINDOW } from './windows';

/**
 * The home pass of a mixed batch, before pass A: the ops whose key's home settles them. The group
 * reads its ops' homes together (\`hv_home_lookup\`, wcme.ts: 4 key words, half a 32-byte sector,
 * per op, where pass A's scan reads the whole bucket), each lane also its first bucket's lock word:
 * - the key at home: an erase retires it (\`hv_retire\`, as pass A does: CAS to TOMBSTONE, freed by
 *   the release pass), an insert is done (insertOrAssign stores its value);
 * - an erase of a key absent from home whose away and far bits are clear (common.ts): the key is
 *   nowhere, nothing to do;
 * - an insert of such a key, when its home had EMPTY words: it claims the first of them that is
 *   still EMPTY by a CAS from EMPTY to its key (\`hv_home_claim\`), then stores its value and clears
 *   the slot's free bit. This departs from WABC (claim the free bit, store the value, then publish
 *   the key): the CAS claims and publishes at once, so nothing waits on an unpublished claim.
 *   Duplicates cannot arise: every op of one key tries the same words in the same order, no word
 *   turns EMPTY during the pass (erases retire to TOMBSTONE), so the second op's CAS fails on the
 *   first's key and it is done, as an insert that found its key. Nothing in this dispatch claims by
 *   the free bits, and nothing reads a value: finds ran in the dispatch before, and pass A (which
 *   waits on unpublished claims) in the one after, so neither the key before its value nor the free
 *   bit after its key is seen;
 * - anything else goes to the rest list, whole, for pass A in its listed mode: inserts whose home
 *   was full or whose key may live elsewhere (their claims, WABC), erases of keys that may live
 *   elsewhere, reserved keys and unknown ops (pass A reports them).
 * (Claims here by WABC, the free bit then the wait on earlier claims, cost more than they saved:
 * H100, 2^27 slots, a 2^22-op 0.5:0.3:0.2 batch at load 0.5, this pass 0.38 → 1.14 ms, pass A
 * 0.62 → 0.21; see apps/bench/results/hive-design-history.md.)
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

/**
 * Claims for key the first of its home's words in \`empties\` (bits from global slot \`first\`, in
 * slot order) that is still EMPTY, by a CAS that writes the key: x the global slot now holding
 * key (NONE: none left), y 1 when this op wrote it, 0 when another op of the batch did.
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
    // Everything pass A must see: reserved keys and unknown ops (it reports them), and below,
    // ops their home does not settle.
    var rest = live && (key >= TOMBSTONE || op > OP_ERASE);
    let go = live && !rest && op != OP_FIND;
    var status = 0u;
    var done = false;
    var freed = NONE;
    let b1 = hv_b1(key);
    let home = hv_home_lookup(key, b1, go);
    if (go) {
      if (home.x != NONE) {
        let at = home.x;
        if (op == OP_ERASE) {
          if (hv_retire(at, key)) {
            status = 1u;
            freed = at;
          }
        } else if (op == OP_INSERT_OR_ASSIGN) {
          atomicStore(&slots[hv_vw(at)], values[i]);
        }
        done = true;
      } else if (op == OP_ERASE && home.y == 0u) {
        // Absent from its home, and its filter bits say from everywhere else.
        done = true;
      } else if (op != OP_ERASE && home.y == 0u && home.z != 0u) {
        // An insert of a key absent from the table as the pass began: a free home slot, if it wins one.
        let c = hv_home_claim(b1 * 32u + hv_home(key) * HOME_SLOTS, home.z, key);
        if (c.x != NONE) {
          if (c.y == 1u || op == OP_INSERT_OR_ASSIGN) { atomicStore(&slots[hv_vw(c.x)], values[i]); }
          if (c.y == 1u) {
            atomicAnd(&masks[b1], ~(1u << (c.x % 32u)));
            count(T_ADDED, 1u);
            status = 1u;
          }
          done = true;
        } else {
          rest = true;
        }
      } else {
        rest = true;
      }
    }
    // Retired slots to the release pass, the rest to pass A: one list reservation per group.
    hv_push_group(L_FREED, freed != NONE, freed);
    hv_push_group(L_REST, rest, i);
    if (done) { out[i] = vec2<u32>(0u, status); }
  }
  flush_tallies(lid);
}
`,
      {
        modules: [
          gridModule,
          homeScanModule(subgroups, true),
          wcmeModule(subgroups),
          pushGroupModule(subgroups),
          retireModule(subgroups),
          talliesModule,
          listsModule,
        ],
        windows: opPassWindows(w),
      },
    ),
});
