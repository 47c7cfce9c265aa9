import { defineKernel, storage, uniform } from '@gpuhash/core';
import { composeWgsl, entryPoint, gridModule, wgslModule } from '@gpuhash/kernels';
import { hortonHashModule } from './common';
import { hortonParams, WORKGROUP_SIZE } from './params';

const entry = entryPoint(WORKGROUP_SIZE);

/**
 * A bucket through the read-only view (`buckets_ro: array<vec4<u32>>`, four 16-byte loads a
 * bucket, served by the cache; only in dispatches that do not write the table).
 * `probe_bucket(b, key)`: x = value, y = 1 if found, z = 1 if b is Type B, w = its remap entries.
 */
export const probeModule = wgslModule(
  'horton.probe',
  /* wgsl */ `
fn probe_bucket(b: u32, key: u32) -> vec4<u32> {
  var r = vec4<u32>(0u, 0u, 0u, 0u);
  for (var q = 0u; q < 4u; q++) {
    let p = buckets_ro[4u * b + q];
    if (p.x == key) { r = vec4<u32>(p.y, 1u, 0u, 0u); }
    if (p.z == key) { r = vec4<u32>(p.w, 1u, 0u, 0u); }
    if (q == 3u && p.z == REMAP) { r.z = 1u; r.w = p.w; }
  }
  return r;
}
`,
  { requires: [hortonHashModule], needs: ['buckets_ro'] },
);

/**
 * Batched lookups (the paper's §5.2 on a GPU): every invocation reads its key's primary bucket;
 * hits and certain misses (Type A, or an unset remap entry) answer at once; the rest go to a
 * workgroup-memory queue of (key, secondary bucket) and the workgroup resolves the queue together,
 * one second bucket read per queued key, with every lane busy. BCHT mode queues every miss of the
 * first bucket for the second. With `count`, `counts` tallies [hits, buckets read by hits, misses,
 * buckets read by misses].
 */
const findSpec = <const B extends Record<string, unknown>>(name: string, count: boolean, extra: B) => ({
  name,
  workgroupSize: WORKGROUP_SIZE,
  variant: { mode: 'horton' },
  params: hortonParams,
  bindings: {
    params: uniform(),
    buckets_ro: storage('read', 'vec4<u32>'),
    keys: storage('read', 'u32'),
    out_values: storage('read_write', 'u32'),
    out_found: storage('read_write', 'u32'),
    ...extra,
  },
  source: (decls: string, v: { mode: string }) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> q_index: array<u32, ${WORKGROUP_SIZE}>;
var<workgroup> q_bucket: array<u32, ${WORKGROUP_SIZE}>;
var<workgroup> q_len: atomic<u32>;
var<workgroup> wg_counts: array<atomic<u32>, 4>;
fn tally(hit: bool, buckets: u32) {
  if (COUNT) {
    let at = select(2u, 0u, hit);
    atomicAdd(&wg_counts[at], 1u);
    atomicAdd(&wg_counts[at + 1u], buckets);
  }
}
${entry} {
  let blocks = (params.n + ${WORKGROUP_SIZE - 1}u) / ${WORKGROUP_SIZE}u;
  for (var b = grid_workgroup(wid, nwg); b < blocks; b += nwg.x * nwg.y) {
    if (lid == 0u) { atomicStore(&q_len, 0u); }
    workgroupBarrier();
    let i = b * ${WORKGROUP_SIZE}u + lid;
    if (i < params.n) {
      let key = keys[i];
      var answer = vec2<u32>(0u, 0u);
      var next = NONE;
      if (!is_reserved(key)) {
        let x = primary_of(key);
        let r = probe_bucket(x, key);
        if (r.y == 1u) { answer = r.xy; }
        else if (BCHT) {
          let y = second_of(key);
          if (y != x) { next = y; }
        } else if (r.z == 1u) {
          let t = tag_of(key);
          let e = entry_of(r.w, t);
          if (e != 0u) { next = secondary_of(x, t, e); }
        }
      }
      if (next == NONE) {
        out_values[i] = answer.x;
        out_found[i] = answer.y;
        tally(answer.y == 1u, 1u);
      } else {
        let at = atomicAdd(&q_len, 1u);
        q_index[at] = i;
        q_bucket[at] = next;
      }
    }
    workgroupBarrier();
    let len = atomicLoad(&q_len);
    if (lid < len) {
      let j = q_index[lid];
      let r = probe_bucket(q_bucket[lid], keys[j]);
      out_values[j] = r.x;
      out_found[j] = r.y;
      tally(r.y == 1u, 2u);
    }
    workgroupBarrier();
  }
  ${
    count
      ? `workgroupBarrier();
  if (lid < 4u) {
    let c = atomicLoad(&wg_counts[lid]);
    if (c != 0u) { atomicAdd(&counts[lid], c); }
  }`
      : ''
  }
}`,
      {
        modules: [gridModule, probeModule],
        constants: { BCHT: v.mode === 'bcht', COUNT: count },
      },
    ),
});

export const findKernel = defineKernel(findSpec('horton.find', false, {}));
/** The find kernel that also counts the buckets its lookups read (hits and misses apart). */
export const countingFindKernel = defineKernel(findSpec('horton.find-counting', true, { counts: storage('read_write', 'atomic<u32>') }));

/**
 * Copies every live pair out, densely, over the slots view (`slots_ro: array<vec2<u32>>`: slot i
 * of the table is bucket i / 8, slot i % 8). params.n = slots.
 */
export const retrieveKernel = defineKernel({
  name: 'horton.retrieve',
  workgroupSize: WORKGROUP_SIZE,
  params: hortonParams,
  bindings: {
    params: uniform(),
    slots_ro: storage('read', 'vec2<u32>'),
    out_keys: storage('read_write', 'u32'),
    out_values: storage('read_write', 'u32'),
    cursor: storage('read_write', 'atomic<u32>'),
  },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> wg_count: atomic<u32>;
var<workgroup> wg_base: u32;
${entry} {
  let blocks = (params.n + ${WORKGROUP_SIZE - 1}u) / ${WORKGROUP_SIZE}u;
  for (var b = grid_workgroup(wid, nwg); b < blocks; b += nwg.x * nwg.y) {
    let i = b * ${WORKGROUP_SIZE}u + lid;
    var s = vec2<u32>(0xffffffffu, 0u);
    if (i < params.n) { s = slots_ro[i]; }
    let live = s.x < 0xfffffffeu;
    var at = 0u;
    if (live) { at = atomicAdd(&wg_count, 1u); }
    workgroupBarrier();
    if (lid == 0u) {
      wg_base = atomicAdd(&cursor[0], atomicLoad(&wg_count));
      atomicStore(&wg_count, 0u);
    }
    workgroupBarrier();
    if (live) {
      out_keys[wg_base + at] = s.x;
      out_values[wg_base + at] = s.y;
    }
    workgroupBarrier();
  }
}`,
      { modules: [gridModule] },
    ),
});

/**
 * Occupancy over the slots view: out = [live keys, keys outside their primary bucket (BCHT: in
 * their second bucket), Type B buckets]. params.n = slots.
 */
export const statsKernel = defineKernel({
  name: 'horton.stats',
  workgroupSize: WORKGROUP_SIZE,
  variant: { mode: 'horton' },
  params: hortonParams,
  bindings: { params: uniform(), slots_ro: storage('read', 'vec2<u32>'), out: storage('read_write', 'atomic<u32>') },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}
var<workgroup> wg: array<atomic<u32>, 3>;
${entry} {
  var live = 0u;
  var away = 0u;
  var type_b = 0u;
  for (var i = grid_thread(wid, nwg, lid, ${WORKGROUP_SIZE}u); i < params.n; i += grid_threads(nwg, ${WORKGROUP_SIZE}u)) {
    let s = slots_ro[i];
    if (s.x == REMAP && (i & 7u) == 7u) { type_b += 1u; }
    if (is_reserved(s.x)) { continue; }
    live += 1u;
    if (primary_of(s.x) != i / 8u) { away += 1u; }
  }
  atomicAdd(&wg[0], live);
  atomicAdd(&wg[1], away);
  atomicAdd(&wg[2], type_b);
  workgroupBarrier();
  if (lid < 3u) { atomicAdd(&out[lid], atomicLoad(&wg[lid])); }
}`,
      { modules: [gridModule, hortonHashModule] },
    ),
});
