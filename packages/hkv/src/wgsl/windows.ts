import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, cooperativeModule, entryPoint, gridModule } from '@gpuhash/kernels';
import { hkvCoreModule, sliceAccessors, sliceBindings, VALUE_DEFAULTS, type ValueVariant, valueWords, WORKGROUP_SIZE } from './common';
import { type GroupVariant, groupEntry, groupQueue } from './group';

/**
 * Value passes for caches whose values span more buffers than one kernel may bind, or more memory
 * than one pass should touch at random (valueWindowBytes). The main kernels (update, insert, export)
 * handle the values of the first window of buffers and record each key's slot; a partition then
 * lists the keys of every other window, and one copy pass per window moves their vectors. A find's
 * lookup pass, and the insert passes of an insertOrAssign without eviction records, bind no values
 * at all, and their lists cover every window.
 */

type WindowVariant = ValueVariant & GroupVariant;
const windowDefaults = { ...VALUE_DEFAULTS, subgroups: false, tile: 1 };

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

/** Invocations per workgroup of the partition and copy passes (plain element loops, no groups). */
const LIST_WORKGROUP = 256;

/** The most windows past the first that one partition lists (each a workgroup counter). */
export const MAX_WINDOW_LISTS = 1024;

/**
 * The lists buffer of a batch: list c (window c + 1) has its count in word c and its cursor in word
 * LISTS + c (the cursor ends one past its last entry), then entries of two words (key index, slot)
 * from word `listHeadWords(lists)` on, list after list.
 */
export function listHeadWords(lists: number): number {
  return 2 * lists + ((2 * lists) & 1);
}

/** Words a batch of n keys needs for its lists. */
export function listWords(lists: number, n: number): number {
  return listHeadWords(lists) + 2 * n;
}

/** Which keys a partition lists: found slots (find), updated keys or keys placed by an insert pass. */
export type ListSource = 'found' | 'updated' | 'placed';

interface PartitionVariant {
  source: ListSource;
  /** The first window listed: 1 (the main pass served the first window) or 0 (it copied no values). */
  first: number;
  /** count (each list's length) or list (the entries, after listOffsetsKernel). */
  phase: 'count' | 'list';
  lists: number;
  sliceSlots: number;
  /** Value buffers per window (every window but the last has this many). */
  perWindow: number;
  deviceSlots: number;
  /** found, list phase: turn the slots into 0/1 found flags once read. */
  flags: boolean;
}

/** The key at index i: its slot in `g` and whether it is listed (source-specific reads, and the list phase's rewrites). */
function listedKey(v: PartitionVariant): string {
  const rewrite = v.phase === 'list';
  switch (v.source) {
    case 'found':
      return `g = src[i];
      todo = true;
      ${rewrite && v.flags ? 'src[i] = select(0u, 1u, g != NONE);' : ''}`;
    case 'updated':
      return `todo = src[OUT_HEAD + i] == ST_UPDATED;
      g = src[OUT_HEAD + params.n + i];`;
    case 'placed':
      return `let st = src[OUT_HEAD + i];
      todo = (st & VALUES_PENDING) != 0u;
      g = src[OUT_HEAD + params.n + i];
      ${rewrite ? 'if (todo) { src[OUT_HEAD + i] = st & ~VALUES_PENDING; }' : ''}`;
  }
}

/**
 * Partitions a batch's keys by the window of value buffers their slot lies in, so that each
 * window's copy pass runs over its own keys only (a pass per window over every key cost as much
 * again as the copies). Three dispatches over one cleared lists buffer: `count` (a workgroup
 * histogram, one atomic per list and workgroup), listOffsetsKernel (lays the lists out) and `list`
 * (workgroup ranks, one cursor atomic per list and workgroup). Keys in windows before the first
 * listed (the main pass served the first window, unless it bound no values), in the host
 * tier, or absent are not listed. Placed keys: the list phase clears their VALUES_PENDING flag and
 * records in out word 2 where the next insert pass's eviction records start.
 */
export const partitionKernel = defineKernel({
  name: 'hkv.window.partition',
  workgroupSize: LIST_WORKGROUP,
  params: { n: 'u32' },
  variant: {
    source: 'found',
    first: 1,
    phase: 'count',
    lists: 1,
    sliceSlots: 128,
    perWindow: 1,
    deviceSlots: 128,
    flags: false,
  } as PartitionVariant,
  bindings: {
    params: uniform(),
    src: storage('read_write', 'u32'),
    lists: storage('read_write', 'atomic<u32>'),
  },
  source: (decls, v) => {
    const listed = /* wgsl */ `let i = base + lid;
    var todo = false;
    var g = NONE;
    if (i < params.n) {
      ${listedKey(v)}
    }
    var l = NONE;
    if (todo) { l = list_of(g); }`;
    const body =
      v.phase === 'count'
        ? /* wgsl */ `  ${chunkLoop('params.n', LIST_WORKGROUP)} {
    ${listed}
    if (l != NONE) { atomicAdd(&wg_hist[l], 1u); }
  }
  workgroupBarrier();
  for (var c = lid; c < LISTS; c += ${LIST_WORKGROUP}u) {
    let m = atomicLoad(&wg_hist[c]);
    if (m != 0u) { atomicAdd(&lists[c], m); }
  }`
        : /* wgsl */ `  ${chunkLoop('params.n', LIST_WORKGROUP)} {
    ${listed}
    var r = 0u;
    if (l != NONE) { r = atomicAdd(&wg_hist[l], 1u); }
    workgroupBarrier();
    for (var c = lid; c < LISTS; c += ${LIST_WORKGROUP}u) {
      let m = atomicExchange(&wg_hist[c], 0u);
      if (m != 0u) { wg_base[c] = atomicAdd(&lists[LISTS + c], m); }
    }
    workgroupBarrier();
    if (l != NONE) {
      let at = LIST_HEAD + 2u * (wg_base[l] + r);
      atomicStore(&lists[at], i);
      atomicStore(&lists[at + 1u], g);
    }
  }
  ${v.source === 'placed' ? 'if (grid_workgroup(wid, nwg) == 0u && lid == 0u) { src[2] = src[0]; }' : ''}`;
    return composeWgsl(
      /* wgsl */ `
${decls}
const LISTS: u32 = ${v.lists}u;
const LIST_HEAD: u32 = ${listHeadWords(v.lists)}u;
var<workgroup> wg_hist: array<atomic<u32>, LISTS>;
var<workgroup> wg_base: array<u32, LISTS>;

/** The list of slot g: its window less the first listed, or NONE for windows before it, the host tier and NONE. */
fn list_of(g: u32) -> u32 {
  if (g >= ${v.deviceSlots}u) { return NONE; }
  let w = (g / ${v.sliceSlots}u) / ${v.perWindow}u;
  return select(w - ${v.first}u, NONE, w < ${v.first}u);
}

${entryPoint(LIST_WORKGROUP)} {
${body}
}
`,
      { modules: [gridModule, hkvCoreModule] },
    );
  },
});

/** Between a partition's count and list phases: each list's cursor starts where the lists before it end. */
export const listOffsetsKernel = defineKernel({
  name: 'hkv.window.offsets',
  workgroupSize: 1,
  variant: { lists: 1 },
  bindings: { lists: storage('read_write', 'u32') },
  source: (decls, v) => /* wgsl */ `
${decls}
@compute @workgroup_size(1)
fn main() {
  var at = 0u;
  for (var c = 0u; c < ${v.lists}u; c++) {
    lists[${v.lists}u + c] = at;
    at += lists[c];
  }
}
`,
});

/** What a copy pass does with a listed key's vector. */
export type CopyKind = 'gather' | 'scatter' | 'accumulate';

/**
 * Copies the vectors of one list's keys (`params.list`, window list + 1): gather (slot to
 * `out_vals`), scatter (`in_vals` to slot) or accumulate (adds). One invocation per word or quad
 * of a vector, so a warp moves whole vectors with no queue, and the grid-strided loop runs over the
 * list's length, which only the device knows.
 */
export const copyKernel = defineKernel({
  name: 'hkv.window.copy',
  workgroupSize: LIST_WORKGROUP,
  params: { list: 'u32' },
  variant: {
    ...VALUE_DEFAULTS,
    lists: 1,
    kind: 'gather',
    checked: false,
  } as ValueVariant & {
    lists: number;
    kind: CopyKind;
    /**
     * Scatter only: the lists of every insert pass of an insertOrAssign at once. When the out
     * buffer's hazard word is set (a later pass evicted a slot this batch may have written), a
     * vector is copied only where the slot still holds the listed key, so the last writer wins.
     */
    checked: boolean;
  },
  bindings: (v: ValueVariant & { kind: CopyKind; checked: boolean }) => ({
    params: uniform(),
    lists: storage('read', 'u32'),
    ...(v.kind === 'gather'
      ? { out_vals: storage('read_write', valueWords(v.dim).element) }
      : { in_vals: storage('read', valueWords(v.dim).element) }),
    ...(v.checked ? { keys: storage('read', 'u32'), batch: storage('read', 'u32'), status: storage('read', 'u32') } : {}),
    ...sliceBindings(v.slices, v.kind === 'gather' ? 'read' : 'read_write', 'v', valueWords(v.dim).element),
  }),
  source: (decls, v) => {
    const io = valueWords(v.dim);
    const move = {
      gather: 'out_vals[i * VW + j] = val_load(g, j);',
      scatter: 'val_store(g, j, in_vals[i * VW + j]);',
      accumulate: 'val_store(g, j, val_load(g, j) + in_vals[i * VW + j]);',
    }[v.kind];
    const guarded = v.checked
      ? `if (!check || (keys[2u * g] == batch[2u * i] && keys[2u * g + 1u] == batch[2u * i + 1u])) { ${move} }`
      : move;
    return composeWgsl(
      /* wgsl */ `
${decls}
${io.wgsl}
${sliceAccessors(v, v.kind !== 'gather', 'v', 'val', io.quads)}
const LIST_HEAD: u32 = ${listHeadWords(v.lists)}u;
var<workgroup> wg_words: u32;
var<workgroup> wg_first: u32;
var<workgroup> wg_check: u32;

${entryPoint(LIST_WORKGROUP)} {
  if (lid == 0u) {
    let count = lists[params.list];
    wg_words = count * VW;
    wg_first = lists[${v.lists}u + params.list] - count;
    ${v.checked ? 'wg_check = status[OUT_HAZARD];' : ''}
  }
  let words = workgroupUniformLoad(&wg_words);
  let first = workgroupUniformLoad(&wg_first);
  let check = workgroupUniformLoad(&wg_check) != 0u;
  ${chunkLoop('words', LIST_WORKGROUP)} {
    let f = base + lid;
    if (f < words) {
      let e = LIST_HEAD + 2u * (first + f / VW);
      let j = f % VW;
      let i = lists[e];
      let g = lists[e + 1u];
      ${guarded}
    }
  }
}
`,
      { modules: [gridModule, hkvCoreModule] },
    );
  },
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
