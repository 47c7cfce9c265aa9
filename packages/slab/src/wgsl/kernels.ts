import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeEntryParams, entryPoint, failureListModule, gridModule } from '@gpuhash/kernels';
import type { SlabMode } from '../geometry';
import { layoutModule } from './layout';
import { lookupsModule } from './lookups';
import { eraseModule, insertModule } from './ops';
import { slabParams, WORKGROUP_SIZE } from './params';
import { talliesModule } from './tallies';

/**
 * The slab kernels. Cooperative kernels serve their lanes' ops by warp-cooperative work sharing
 * (WCWS, the paper's §IV-A): each lane takes one batch entry; the group ballots which lanes have
 * work, and while any do, takes the lowest such lane's key (a broadcast), runs the op together
 * over the key's chain, and the source lane writes the result. Groups are aligned tiles of
 * `tile` lanes of a subgroup (the constant TILE: a slab is 16 cells, so at most 16 lanes are
 * useful, and no more than the device's smallest subgroup); without subgroups TILE is 1 and each
 * invocation is a group of one that reads a slab in 16 steps.
 */

/** Variant fields every cooperative kernel has. */
interface Cooperative {
  mode: SlabMode;
  subgroups: boolean;
  tile: number;
}
const cooperative: Cooperative = { mode: 'map', subgroups: false, tile: 16 };

const entry = (subgroups: boolean) => entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }));
const words = storage('read', 'u32');
const atomics = storage('read_write', 'atomic<u32>');

function modeConstants(mode: SlabMode) {
  return { SET_MODE: mode === 'set', UNIQUE: mode !== 'multimap' };
}

/**
 * The opening of a WCWS kernel: the group set-up, then a whole-workgroup chunk loop in which lane
 * entry `i` (its batch index: `sel[t]` when rerunning a subset) has `key` and `live`, and a queue
 * loop that runs \`body\` for source lane `src` and key `k` (the caller closes both loops).
 */
function wcwsHead(subgroups: boolean, load: string, declare = ''): string {
  return /* wgsl */ `${entry(subgroups)} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, TILE);
  sa_group_init(wid, nwg, lid);
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let t = base + lid;
    var i = t;
    var key = EMPTY_KEY;
    var live = false;
    // What else the kernel reads per entry (a value, an op code, an offset).
    var value_word = 0u;
    var op_word = 0u;
    ${declare}
    if (t < params.n) {
      if (params.use_sel == 1u) { i = sel[t]; }
      key = keys[i];
      ${load}
    }
    // Each lane hashes its own key once; the loop broadcasts key and bucket from the source lane.
    var bucket = 0u;
    if (live) { bucket = sl_bucket(key); }
    var queue = cg_ballot32(live);
    loop {
      if (queue == 0u) { break; }
      let src = firstTrailingBit(queue);
      queue &= queue - 1u;
      let k = cg_broadcast(key, src);
      let home = cg_broadcast(bucket, src);`;
}

/** Where a kernel without the allocator still calls sa_group_init. */
const NO_ALLOC = 'fn sa_group_init(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) {}';
const WITH_ALLOC = `fn sa_group_init(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) {
  sa_init(grid_workgroup(wid, nwg) * ${WORKGROUP_SIZE}u + lid - cg_lane());
}`;

/** Insert batches (REPLACE in unique modes, INSERT in multimap): `assign` overwrites present keys' values; `reuse` claims tombstones too. */
export const insertKernel = defineKernel({
  name: 'slab.insert',
  workgroupSize: WORKGROUP_SIZE,
  variant: { ...cooperative, assign: false, reuse: false },
  params: slabParams,
  bindings: {
    params: uniform(),
    slabs: atomics,
    bitmap: atomics,
    keys: words,
    values: words,
    sel: words,
    counters: atomics,
    failed: atomics,
  },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${WITH_ALLOC}
${wcwsHead(v.subgroups, 'value_word = values[i]; if (sl_reserved(key)) { report_failure(i | FAILURE_RESERVED); } else { live = true; }')}
      let r = sl_insert(k, home, value_word, src, ASSIGN);
      if (cg_lane() == src) {
        if (r == INS_ADDED_EMPTY || r == INS_ADDED_TOMB) { count(T_ADDED, 1u); }
        if (r == INS_ADDED_TOMB) { count(T_UNTOMBED, 1u); }
        if (r == INS_NO_SLAB) { count(T_EXHAUSTED, 1u); report_failure(i); }
        if (r == INS_CONTENDED) { report_failure(i | FAILURE_CONTENDED); }
      }
    }
  }
  flush_tallies(lid);
}`,
      {
        modules: [gridModule, layoutModule, insertModule(v.subgroups), talliesModule, failureListModule],
        constants: { ...modeConstants(v.mode), TILE: v.tile, MIXED: false, REUSE: v.reuse && v.mode !== 'multimap', ASSIGN: v.assign },
      },
    ),
});

/** Find batches through the read-only view (`slabs_ro`: the slabs buffer as cells). */
export const findKernel = defineKernel({
  name: 'slab.find',
  workgroupSize: WORKGROUP_SIZE,
  variant: cooperative,
  params: slabParams,
  bindings: {
    params: uniform(),
    slabs_ro: storage('read', 'vec2<u32>'),
    keys: words,
    sel: words,
    out_values: storage('read_write', 'u32'),
    out_found: storage('read_write', 'u32'),
  },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${NO_ALLOC}
fn sl_gather(at: u32, value: u32) {}
${wcwsHead(v.subgroups, 'live = !sl_reserved(key); if (!live) { out_values[i] = 0u; out_found[i] = 0u; }', 'var result = vec2<u32>(0u, 0u);')}
      let r = sl_find(k, home);
      if (cg_lane() == src) { result = r; }
    }
    // Every lane writes its own answer: one coalesced store per chunk, not one per op.
    if (live) {
      out_values[i] = result.x;
      out_found[i] = result.y;
    }
  }
}`,
      { modules: [gridModule, layoutModule, lookupsModule('plain', v.subgroups)], constants: { ...modeConstants(v.mode), TILE: v.tile } },
    ),
});

/** Counts per key (multimap `count`), or, with `gather`, writes each key's values from out_offsets[i] on (`findAll`). */
export const copiesKernel = defineKernel({
  name: 'slab.copies',
  workgroupSize: WORKGROUP_SIZE,
  variant: { ...cooperative, gather: false },
  params: slabParams,
  bindings: {
    params: uniform(),
    slabs_ro: storage('read', 'vec2<u32>'),
    keys: words,
    sel: words,
    offsets: words,
    out_counts: storage('read_write', 'u32'),
    out_values: storage('read_write', 'u32'),
  },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${NO_ALLOC}
fn sl_gather(at: u32, value: u32) { out_values[at] = value; }
${wcwsHead(v.subgroups, 'if (GATHER) { value_word = offsets[i]; } live = !sl_reserved(key); if (!live && !GATHER) { out_counts[i] = 0u; }')}
      let at = cg_broadcast(value_word, src);
      let copies = sl_walk_copies(k, home, GATHER, at);
      if (!GATHER && cg_lane() == src) { out_counts[i] = copies; }
    }
  }
}`,
      {
        modules: [gridModule, layoutModule, lookupsModule('plain', v.subgroups)],
        constants: { ...modeConstants(v.mode), TILE: v.tile, GATHER: v.gather },
      },
    ),
});

/** Erase batches: the first copy of each key (`all`: every copy, multimap). */
export const eraseKernel = defineKernel({
  name: 'slab.erase',
  workgroupSize: WORKGROUP_SIZE,
  variant: { ...cooperative, all: false },
  params: slabParams,
  bindings: { params: uniform(), slabs: atomics, keys: words, sel: words, counters: atomics, failed: atomics },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${NO_ALLOC}
${wcwsHead(v.subgroups, 'if (sl_reserved(key)) { report_failure(i | FAILURE_RESERVED); } else { live = true; }')}
      var erased = 0u;
      if (ALL) { erased = sl_erase_all(k, home); } else { erased = sl_erase_one(k, home, src); }
      if (cg_lane() == src && erased > 0u) {
        count(T_ERASED, erased);
        if (UNIQUE) { count(T_TOMBED, erased); }
      }
    }
  }
  flush_tallies(lid);
}`,
      {
        modules: [gridModule, layoutModule, eraseModule(v.subgroups), talliesModule, failureListModule],
        constants: { ...modeConstants(v.mode), TILE: v.tile, ALL: v.all },
      },
    ),
});

/**
 * Mixed batches: insert, insertOrAssign, find and erase ops, all concurrent (the paper's
 * concurrent benchmark). Inserts publish through BUSY and claim only EMPTY slots. `out` gets
 * (value, status) per op; op codes past 3 are refused like reserved keys.
 */
export const applyKernel = defineKernel({
  name: 'slab.apply',
  workgroupSize: WORKGROUP_SIZE,
  variant: cooperative,
  params: slabParams,
  bindings: {
    params: uniform(),
    slabs: atomics,
    bitmap: atomics,
    ops: words,
    keys: words,
    values: words,
    sel: words,
    out: storage('read_write', 'vec2<u32>'),
    counters: atomics,
    failed: atomics,
  },
  source: (decls, v) =>
    composeWgsl(
      /* wgsl */ `
${decls}
${WITH_ALLOC}
fn sl_gather(at: u32, value: u32) {}
${wcwsHead(
  v.subgroups,
  `op_word = ops[i];
      value_word = values[i];
      if (sl_reserved(key) || op_word > 3u) { report_failure(i | FAILURE_RESERVED); out[i] = vec2<u32>(0u, 0u); } else { live = true; }`,
)}
      let op = cg_broadcast(op_word, src);
      var result = vec2<u32>(0u, 0u);
      if (op <= 1u) {
        let r = sl_insert(k, home, value_word, src, op == 1u);
        if (cg_lane() == src) {
          if (r == INS_ADDED_EMPTY) { count(T_ADDED, 1u); result.y = 1u; }
          if (r == INS_NO_SLAB) { count(T_EXHAUSTED, 1u); report_failure(i); }
          if (r == INS_CONTENDED) { report_failure(i | FAILURE_CONTENDED); }
        }
      } else if (op == 2u) {
        result = sl_find(k, home);
      } else {
        let erased = sl_erase_one(k, home, src);
        if (cg_lane() == src && erased > 0u) {
          count(T_ERASED, 1u);
          if (UNIQUE) { count(T_TOMBED, 1u); }
          result.y = 1u;
        }
      }
      if (cg_lane() == src) { out[i] = result; }
    }
  }
  flush_tallies(lid);
}`,
      {
        modules: [
          gridModule,
          layoutModule,
          insertModule(v.subgroups),
          eraseModule(v.subgroups),
          lookupsModule('atomic', v.subgroups),
          talliesModule,
          failureListModule,
        ],
        constants: { ...modeConstants(v.mode), TILE: v.tile, MIXED: true, REUSE: false },
      },
    ),
});
