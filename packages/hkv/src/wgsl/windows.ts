import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeModule, gridModule } from '@gpuhash/kernels';
import { hkvCoreModule, sliceAccessors, sliceBindings, type ValueVariant, valueWords, WORKGROUP_SIZE } from './common';
import { type GroupVariant, groupEntry, groupQueue } from './group';

/**
 * Value passes for caches whose values span more buffers than one kernel may bind. The main
 * kernels (find, update, insert, export) handle the values of the first window of buffers; these
 * passes then copy the values of the other windows, one dispatch per window, from the slots the
 * main kernel recorded. Each is cooperative (a group of lanes per key copies its vector, lanes over
 * j) and reads only words no other invocation of its dispatch writes.
 */

type WindowVariant = ValueVariant & GroupVariant;
const windowDefaults = { dim: 1, slices: 1, sliceSlots: 128, deviceSlots: 128, sliceBase: 0, subgroups: false, tile: 1 };

const copyLoop = (target: string, source: string) =>
  `for (var j = cg_lane(); j < VW; j += TILE) { ${target.replace('$j', 'j')} = ${source.replace('$j', 'j')}; }`;

/**
 * A window pass's WGSL: the accessors of this window's value buffers (`writable` for stores), then
 * `body` inside the cooperative entry point, after the tiling of its subgroup.
 */
function windowSource(decls: string, v: WindowVariant, writable: boolean, body: string): string {
  return composeWgsl(
    /* wgsl */ `
${decls}
${valueWords(v.dim).wgsl}
${sliceAccessors(v, writable, 'v', 'val', valueWords(v.dim).quads)}

${groupEntry(v.subgroups)} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, TILE);
${body}}
`,
    { modules: [gridModule, hkvCoreModule, cooperativeModule({ subgroups: v.subgroups })], constants: { TILE: v.tile, DIM: v.dim } },
  );
}

/**
 * find: `found[i]` holds key i's slot (NONE when absent); copies the values of slots in this window
 * to `out_vals`. `flags`: the last window, which turns the slots into 0/1 found flags.
 */
export const gatherKernel = defineKernel({
  name: 'hkv.window.gather',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32' },
  variant: { ...windowDefaults, flags: false } as WindowVariant & { flags: boolean },
  bindings: (v: WindowVariant) => ({
    params: uniform(),
    found: storage('read_write', 'u32'),
    out_vals: storage('read_write', valueWords(v.dim).element),
    ...sliceBindings(v.slices, 'read', 'v', valueWords(v.dim).element),
  }),
  source: (decls, v) =>
    windowSource(
      decls,
      v,
      false,
      /* wgsl */ `  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    var g = NONE;
    if (i < params.n) { g = found[i]; }
    ${groupQueue(
      'val_here(g)',
      `let gs = cg_broadcast(g, src);
      let is = cg_broadcast(i, src);
      ${copyLoop('out_vals[is * VW + $j]', 'val_load(gs, $j)')}`,
    )}
    ${v.flags ? 'if (i < params.n) { found[i] = select(0u, 1u, g != NONE); }' : ''}
  }
`,
    ),
});

/**
 * Writes batch values into this window's slots, after the update pass (`source` 'updated': keys with
 * status updated; `accumulate` adds) or after an insert pass ('placed': keys whose status carries
 * VALUES_PENDING; the last window, `last`, clears the flag and records the eviction count of the
 * pass in out word 2, where the next pass's evicted-value copies start).
 */
export const scatterKernel = defineKernel({
  name: 'hkv.window.scatter',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32' },
  variant: { ...windowDefaults, placed: false, accumulate: false, last: false } as WindowVariant & {
    placed: boolean;
    accumulate: boolean;
    last: boolean;
  },
  bindings: (v: WindowVariant) => ({
    params: uniform(),
    out: storage('read_write', 'u32'),
    in_vals: storage('read', valueWords(v.dim).element),
    ...sliceBindings(v.slices, 'read_write', 'v', valueWords(v.dim).element),
  }),
  source: (decls, v) =>
    windowSource(
      decls,
      v,
      true,
      /* wgsl */ `  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let i = base + lid;
    var st = ST_NONE;
    var g = NONE;
    if (i < params.n) {
      st = out[OUT_HEAD + i];
      g = out[OUT_HEAD + params.n + i];
    }
    let todo = ${v.placed ? '(st & VALUES_PENDING) != 0u' : 'st == ST_UPDATED'};
    ${groupQueue(
      'todo && val_here(g)',
      `let gs = cg_broadcast(g, src);
      let is = cg_broadcast(i, src);
      for (var j = cg_lane(); j < VW; j += TILE) { val_store(gs, j, ${v.accumulate ? 'val_load(gs, j) + ' : ''}in_vals[is * VW + j]); }
`,
    )}
    ${v.placed && v.last ? 'if (todo) { out[OUT_HEAD + i] = st & ~VALUES_PENDING; }' : ''}
  }
  ${v.placed && v.last ? 'if (grid_workgroup(wid, nwg) == 0u && lid == 0u) { out[2] = out[0]; }' : ''}
`,
    ),
});

/**
 * Evicted (or exported) entries' values in this window: records `e` in [out[2], out[0]) of 5 words
 * from word `rec`, their slot in word 4, values to `ev_vals[e * dim ..]`. Runs after the pass that
 * wrote the records and before anything overwrites those slots (the scatter of placed keys).
 */
export const evictedKernel = defineKernel({
  name: 'hkv.window.evicted',
  workgroupSize: WORKGROUP_SIZE,
  params: { n: 'u32', rec: 'u32' },
  variant: windowDefaults as WindowVariant,
  bindings: (v: WindowVariant) => ({
    params: uniform(),
    out: storage('read', 'u32'),
    ev_vals: storage('read_write', valueWords(v.dim).element),
    ...sliceBindings(v.slices, 'read', 'v', valueWords(v.dim).element),
  }),
  source: (decls, v) =>
    windowSource(
      decls,
      v,
      false,
      /* wgsl */ `  let first = out[2];
  let end = out[0];
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    let e = first + base + lid;
    var g = NONE;
    if (e < end) { g = out[params.rec + EV_WORDS * e + 4u]; }
    ${groupQueue(
      'val_here(g)',
      `let gs = cg_broadcast(g, src);
      let es = cg_broadcast(e, src);
      ${copyLoop('ev_vals[es * VW + $j]', 'val_load(gs, $j)')}`,
    )}
  }
`,
    ),
});
