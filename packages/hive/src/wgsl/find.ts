import type { Kernel } from '@gpuhash/core';
import { composeWgsl, cooperativeEntryParams, gridModule } from '@gpuhash/kernels';
import { HOME_SLOTS, HOMES } from '../split-pointer';
import { commonModule } from './common';
import { cachedKernel, chunkLoop, entryPoint } from './kernel-cache';
import { lookupLanesModule } from './wcme';

/** 16-byte words of a home. */
const HOME_V4 = HOME_SLOTS / 4;

/** \`let p0 = slots_v4[q]; let p1 = ...\`: count loads, written out so all are in flight at once. */
function loads(p: string, q: string, count: number, indent = '      '): string {
  return Array.from({ length: count }, (_, i) => `${indent}let ${p}${i} = slots_v4[${q} + ${i}u];`).join('\n');
}
function args(p: string, count: number): string {
  return Array.from({ length: count }, (_, i) => `${p}${i}`).join(', ');
}
/** A WGSL function: the index of key among count 16-byte words of key slots, NONE if absent. */
function matchFn(name: string, count: number): string {
  const params = Array.from({ length: count }, (_, i) => `v${i}: vec4<u32>`).join(', ');
  // From the last word to the first, so the lowest match wins (a key is stored once anyway).
  const body = Array.from({ length: count }, (_, j) => count - 1 - j)
    .map((i) => `  { let m = hv_match_v4(v${i}, key); if (m != NONE) { s = ${4 * i}u + m; } }`)
    .join('\n');
  return `fn ${name}(${params}, key: u32) -> u32 {\n  var s = NONE;\n${body}\n  return s;\n}`;
}
const matchCode = /* wgsl */ `
/** The index (0..3) of key among 4 key words, NONE if absent. */
fn hv_match_v4(v: vec4<u32>, key: u32) -> u32 {
  var s = NONE;
  if (v.w == key) { s = 3u; }
  if (v.z == key) { s = 2u; }
  if (v.y == key) { s = 1u; }
  if (v.x == key) { s = 0u; }
  return s;
}
${matchFn('hv_match_home', HOME_V4)}
${matchFn('hv_match_line', 8)}`;

/**
 * How a find looks past its key's home sector. 'lanes': each lane reads the rest of its bucket
 * (and its second bucket and stash line when flagged) itself, 16 bytes per load. 'wcme': the
 * lanes that need it share the transposed WCME scan of their group. Both read the same lines.
 */
export type FindProbe = 'lanes' | 'wcme';

/**
 * Finds, read-only: every lane owns one key and first reads its home sector (32 bytes) and its
 * first bucket's lock word. A key found there, or absent with its sector bit clear, is answered
 * after one round trip (most keys: home-sector claims come first). The others look through the
 * rest of the first bucket, then (when the overflow bit says so) the second bucket and the stash
 * line, as \`probe\` says; each owner then reads its value, one word per hit. Plain loads of
 * read-only bindings, so nothing here is atomic and the cache serves repeated lines.
 *
 * mode 0 (find batches): out_values[i], out_found[i]. mode MODE_APPLY: the finds of a mixed batch,
 * run before its other ops (so they see the table as it was before the batch, which the mixed-batch
 * contract allows): out_values holds (value, status) pairs and only ops[i] == OP_FIND are looked up.
 * Bindings: params, slots_ro, ops, keys, out_values, out_found, counters (read), masks_ro (the meta
 * buffer), slots_v4 (the slots buffer again, as 16-byte words).
 */
export function findKernel(subgroups: boolean, probe: FindProbe = 'lanes'): Kernel {
  return cachedKernel('find', `${subgroups ? 'sg' : 'fb'}.${probe}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> slots_ro: array<u32>;
@group(0) @binding(2) var<storage, read> ops: array<u32>;
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> out_values: array<u32>;
@group(0) @binding(5) var<storage, read_write> out_found: array<u32>;
@group(0) @binding(6) var<storage, read> counters: array<u32>;
@group(0) @binding(7) var<storage, read> masks_ro: array<u32>;
@group(0) @binding(8) var<storage, read> slots_v4: array<vec4<u32>>;

${matchCode}

/** The first 16-byte word of home h of bucket b's key line. */
fn hv_home_v4(b: u32, h: u32) -> u32 { return b * 16u + ${HOME_V4}u * h; }

/** The slot (0..31) of key in bucket b's key line, NONE if absent: 8 loads, all in flight at once. */
fn hv_probe_line(b: u32, key: u32) -> u32 {
  let q = b * 16u;
${loads('v', 'q', 8)}
  return hv_match_line(${args('v', 8)}, key);
}

var<workgroup> wg_stash: u32;

${probe === 'wcme' ? `${entryPoint(cooperativeEntryParams({ subgroups }))} {\n  cg_init_tiled(cg_sg_lane, cg_sg_size, 32u);` : `${entryPoint()} {`}
  if (lid == 0u) { wg_stash = counters[C_STASH]; }
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  let apply = params.mode == MODE_APPLY;
  ${chunkLoop('params.n')} {
    // This dispatch covers batch entries aux1 .. aux1 + n - 1.
    let local = base + lid;
    let i = params.aux1 + local;
    var key = EMPTY;
    var go = false;
    if (local < params.n && (!apply || ops[i] == OP_FIND)) {
      key = keys[i];
      // Reserved keys (device batches are not validated for finds) are never found.
      go = key < TOMBSTONE;
    }
    let b1 = hv_b1(key);
    let b2 = hv_b2(key);
    // The home first: each lane reads its key's home in b1 (one DRAM burst) and b1's lock word.
    // Most keys live there, and a key absent from it whose home bit is clear is a miss.
    var at = NONE;
    var slow = false;
    var spilled = false;
    let h = hv_home(key);
    if (go) {
      let q = hv_home_v4(b1, h);
${loads('x', 'q', HOME_V4)}
      let word = masks_ro[params.lock_base + b1];
      let s = hv_match_home(${args('x', HOME_V4)}, key);
      if (s != NONE) {
        at = b1 * 32u + HOME_SLOTS * h + s;
      } else {
        slow = (word & (4u << h)) != 0u;
        spilled = (word & 2u) != 0u && b2 != b1;
      }
    }
${probe === 'lanes' ? lanesSlowPath : wcmeSlowPath}
    var value = 0u;
    if (at != NONE) { value = slots_ro[hv_vw(at)]; }
    let found = select(0u, 1u, at != NONE);
    if (apply) {
      if (local < params.n && ops[i] == OP_FIND) {
        out_values[2u * i] = value;
        out_values[2u * i + 1u] = found;
      }
    } else if (local < params.n) {
      out_values[i] = value;
      out_found[i] = found;
    }
  }
}
`,
      { modules: probe === 'wcme' ? [gridModule, lookupLanesModule(subgroups)] : [gridModule, commonModule] },
    ),
  );
}

/**
 * Past the home, lane by lane: the rest of b1 (the first place a key leaves its home for), then
 * b2's line when the overflow bit is set, then the stash line. One after the other: reading b2
 * with b1 cost more bandwidth than it saved latency.
 */
const lanesSlowPath = /* wgsl */ `
    if (slow) {
${Array.from(
  { length: HOMES - 1 },
  (_, k) => `      if (at == NONE) {
        let o = (h + ${k + 1}u) % HOMES;
        let q = hv_home_v4(b1, o);
${loads('y', 'q', HOME_V4, '        ')}
        let s = hv_match_home(${args('y', HOME_V4)}, key);
        if (s != NONE) { at = b1 * 32u + HOME_SLOTS * o + s; }
      }`,
).join('\n')}
      if (at == NONE && spilled) {
        let s = hv_probe_line(b2, key);
        if (s != NONE) { at = b2 * 32u + s; }
      }
      if (at == NONE && stash_live && (masks_ro[params.lock_base + b1] & 2u) != 0u) {
        let line = hv_stash_bucket(key);
        let s = hv_probe_line(line, key);
        if (s != NONE) { at = line * 32u + s; }
      }
    }`;

/** Past the home with the transposed WCME: the lanes that need it share their group's scans. */
const wcmeSlowPath = /* wgsl */ `
    if (cg_ballot32(slow) != 0u) {
      let m1 = hv_lookup_lanes(b1, key, slow);
      if (m1 != 0u) { at = b1 * 32u + firstTrailingBit(m1); }
    }
    let go2 = slow && at == NONE && spilled;
    if (cg_ballot32(go2) != 0u) {
      let m2 = hv_lookup_lanes(b2, key, go2);
      if (m2 != 0u) { at = b2 * 32u + firstTrailingBit(m2); }
    }
    let go3 = slow && at == NONE && stash_live && (masks_ro[params.lock_base + b1] & 2u) != 0u;
    if (cg_ballot32(go3) != 0u) {
      let line = hv_stash_bucket(key);
      let ms = hv_lookup_lanes(line, key, go3);
      if (ms != 0u) { at = line * 32u + firstTrailingBit(ms); }
    }`;
