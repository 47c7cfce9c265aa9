import { defineKernel } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeEntryParams, entryPoint, gridModule } from '@gpuhash/kernels';
import { WORKGROUP_SIZE } from './common';
import { listsModule } from './lists';
import { opPassBindings, pushGroupModule, retireModule } from './op-pass';
import { hiveParams } from './params';
import { talliesModule } from './tallies';
import { homeScanModule, wcmeModule } from './wcme';

/** Claim attempts of a home claim (each one atomicAnd) before the op goes to pass A. */
export const HOME_CLAIM_ROUNDS = 4;
/** Rounds a home claim re-reads the home slots claimed before it, waiting for their keys, before it goes to pass A. */
export const HOME_CHECK_ROUNDS = 64;

/**
 * A home claim: an insert of key into its home h of bucket b, which it was read absent from, with
 * \`empty\` the home's slots (bits 0..HOME_SLOTS-1) whose key word read EMPTY, and its filter bits
 * saying it is nowhere else. Claims a free slot of the home (one atomicAnd), stores the value, then,
 * as pass A does, waits until the home slots claimed before it by this pass (EMPTY when read,
 * taken since) are published: if one holds key, that insert wins (insertOrAssign stores its value
 * there too) and this slot is given up; else it publishes key. x: 0 inserted, 1 key found in an
 * earlier claim, 2 not settled (no free slot, or the wait ran out): pass A takes the op; y: a slot
 * given up (TOMBSTONE, for the release pass), NONE if none. Only slots of the home are claimed, so
 * a twin insert of key in this pass claims in the same home, where the check sees it; a twin left
 * to pass A finds key published by its scan.
 */
const homeClaimCode = /* wgsl */ `
fn hv_home_claim(key: u32, value: u32, b: u32, h: u32, empty: u32, assign: bool) -> vec2<u32> {
  let home_bits = hv_low_mask(HOME_SLOTS) << (HOME_SLOTS * h);
  let seen_empty = empty << (HOME_SLOTS * h);
  var guess = seen_empty;
  var mine = NONE;
  var earlier = 0u;
  for (var round = 0u; round < HOME_CLAIM_ROUNDS && guess != 0u; round++) {
    let take = guess & (0u - guess);
    let old = atomicAnd(&masks[b], ~take);
    if ((old & take) != 0u) {
      mine = b * 32u + firstTrailingBit(take);
      earlier = ~old & seen_empty;
      break;
    }
    guess = old & home_bits;
  }
  if (mine == NONE) { return vec2<u32>(2u, NONE); }
  atomicStore(&slots[hv_vw(mine)], value);
  var pending = earlier;
  for (var round = 0u; round < HOME_CHECK_ROUNDS && pending != 0u; round++) {
    var m = pending;
    pending = 0u;
    loop {
      if (m == 0u) { break; }
      let s = firstTrailingBit(m);
      m &= m - 1u;
      let k = atomicLoad(&slots[hv_key_word(b, s)]);
      if (k == key) {
        if (assign) { atomicStore(&slots[hv_vw(b * 32u + s)], value); }
        atomicStore(&slots[hv_kw(mine)], TOMBSTONE);
        return vec2<u32>(1u, mine);
      }
      if (k == EMPTY) { pending |= 1u << s; }
    }
  }
  if (pending != 0u) {
    atomicStore(&slots[hv_kw(mine)], TOMBSTONE);
    return vec2<u32>(2u, mine);
  }
  atomicStore(&slots[hv_kw(mine)], key);
  return vec2<u32>(0u, NONE);
}`;

/**
 * The home pass of a mixed batch, before pass A: the ops whose key's home settles them. The group
 * reads its ops' homes together (\`hv_home_lookup\`, wcme.ts: 4 key words, half a 32-byte sector,
 * per op, where pass A's scan reads the whole bucket), each lane also its first bucket's lock word:
 * - the key at home: an erase retires it (\`hv_retire\`, as pass A does: CAS to TOMBSTONE, freed by
 *   the release pass), an insert is done (insertOrAssign stores its value);
 * - an erase of a key absent from home whose away and far bits are clear (common.ts): the key is
 *   nowhere, nothing to do;
 * - with \`homeClaims\`, an insert of a key absent from home, nowhere else by those bits, whose home
 *   read a free slot: the home claim (\`hv_home_claim\`) places it there (at load 0.5, nearly
 *   every insert), and pass A never scans its bucket;
 * - anything else goes to the rest list, whole, for pass A in its listed mode: inserts that may
 *   be elsewhere or find their home full (WABC claims), keys that may live elsewhere, reserved
 *   keys and unknown ops (pass A reports them).
 * Same bindings as pass A (ops and out real: mixed batches only); aux1 the chunk's first batch
 * index. The finds ran before (find.ts).
 */
export const homePassKernel = defineKernel({
  name: 'hive.home-pass',
  workgroupSize: WORKGROUP_SIZE,
  variant: { subgroups: false, homeClaims: true },
  params: hiveParams,
  bindings: opPassBindings,
  source: (decls, { subgroups, homeClaims }) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${homeClaimCode}

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
    let home = hv_home_lookup(key, hv_b1(key), go);
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
      } else if (HOME_CLAIMS && home.y == 0u && home.z != 0u && op != OP_ERASE) {
        let c = hv_home_claim(key, values[i], hv_b1(key), hv_home(key), home.z, op == OP_INSERT_OR_ASSIGN);
        freed = c.y;
        if (c.x == 0u) {
          status = 1u;
          count(T_ADDED, 1u);
        }
        done = c.x != 2u;
        rest = c.x == 2u;
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
          homeScanModule(subgroups),
          wcmeModule(subgroups),
          pushGroupModule(subgroups),
          retireModule(subgroups),
          talliesModule,
          listsModule,
        ],
        constants: { HOME_CLAIMS: homeClaims, HOME_CLAIM_ROUNDS, HOME_CHECK_ROUNDS },
      },
    ),
});
