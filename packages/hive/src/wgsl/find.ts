import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { HOME_SLOTS } from '../split-pointer';
import { commonModule } from './common';
import { cachedKernel, chunkLoop, entryPoint } from './kernel-cache';

if (HOME_SLOTS !== 8) throw new Error('find.ts reads a home as two 16-byte words: HOME_SLOTS must be 8');

/**
 * Finds, read-only and lane by lane: no cooperation, since a lane reads 32 bytes where a WCME
 * scan reads a 128-byte line per key (WCME measured slower here at every load on an H200). Each
 * lane first reads its key's home in its first bucket (one 32-byte sector), the home's 8 values
 * (the sector beside it in the value line) and that bucket's lock word. A key found there, or
 * absent with both its filter bits clear (away and far), is answered after that one round trip
 * (most keys: claims take slots at home first). With its away bit set, a key absent from its home
 * reads the rest of the first bucket; with its far bit set, the second bucket (its home there
 * first), and when the stash bit is set too, the stash line. A hit away from home then reads its
 * value word. Plain loads of read-only bindings, so nothing here is atomic and the cache serves
 * repeated lines.
 *
 * Shape measured on an H200 (2026-11-22): this inline form beat a version with the rest in a
 * function with early returns (hits at 0.95: 11.7 against 14.2 ms for 2^27 slots), and two keys
 * per lane were slower than one (hits at 0.5: 15.5 G/s on a faster host against 17.6). Reading
 * the home's values with its keys was first measured 17% faster for hits at load 0.5 but no faster
 * at 0.95, and 35-55% slower for misses; with the far filter it took hits at 0.5 from 4.64 to 3.85
 * ms, and hits (8.43, 8.42 ms) and misses at 0.95 (7.54, 7.48) and misses at 0.5 (2.64) stayed
 * the same (perf-hive at 4549623, 2^27 slots, H200, 2026-11-22).
 *
 * mode 0 (find batches): out_values[i], out_found[i]. mode MODE_APPLY: the finds of a mixed batch,
 * run before its other ops (so they see the table as it was before the batch, which the mixed-batch
 * contract allows): out_values holds (value, status) pairs and only ops[i] == OP_FIND are looked up.
 * Bindings: params, slots_ro, ops, keys, out_values, out_found, counters (read), masks_ro (the meta
 * buffer), slots_v4 (the slots buffer again, as 16-byte words).
 */
export function findKernel(): Kernel {
  return cachedKernel('find', '', () =>
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

/** The index (0..7) of key among a home's 8 key words, NONE if absent (a key is stored once). */
fn hv_match8(lo: vec4<u32>, hi: vec4<u32>, key: u32) -> u32 {
  var s = NONE;
  if (hi.w == key) { s = 7u; }
  if (hi.z == key) { s = 6u; }
  if (hi.y == key) { s = 5u; }
  if (hi.x == key) { s = 4u; }
  if (lo.w == key) { s = 3u; }
  if (lo.z == key) { s = 2u; }
  if (lo.y == key) { s = 1u; }
  if (lo.x == key) { s = 0u; }
  return s;
}

/** Word s (0..7) of a home's 8 words read as two 16-byte words. */
fn hv_pick8(lo: vec4<u32>, hi: vec4<u32>, s: u32) -> u32 {
  let v = select(lo, hi, s >= 4u);
  let t = s & 3u;
  return select(select(v.x, v.y, t == 1u), select(v.z, v.w, t == 3u), t >= 2u);
}

/** Bucket b's key line as 16-byte words: the index of home j's first. */
fn hv_home_v4(b: u32, j: u32) -> u32 { return b * 16u + 2u * j; }

/** The slot (0..31) of key in bucket b's key line, NONE if absent: 8 loads, all in flight at once. */
fn hv_probe_line(b: u32, key: u32) -> u32 {
  let q = b * 16u;
  let v0 = slots_v4[q]; let v1 = slots_v4[q + 1u]; let v2 = slots_v4[q + 2u]; let v3 = slots_v4[q + 3u];
  let v4 = slots_v4[q + 4u]; let v5 = slots_v4[q + 5u]; let v6 = slots_v4[q + 6u]; let v7 = slots_v4[q + 7u];
  return hv_match_line(v0, v1, v2, v3, v4, v5, v6, v7, key);
}

fn hv_match_line(v0: vec4<u32>, v1: vec4<u32>, v2: vec4<u32>, v3: vec4<u32>, v4: vec4<u32>, v5: vec4<u32>, v6: vec4<u32>, v7: vec4<u32>, key: u32) -> u32 {
  var s = hv_match8(v6, v7, key);
  if (s != NONE) { s += 24u; }
  let c = hv_match8(v4, v5, key);
  if (c != NONE) { s = 16u + c; }
  let b = hv_match8(v2, v3, key);
  if (b != NONE) { s = 8u + b; }
  let a = hv_match8(v0, v1, key);
  if (a != NONE) { s = a; }
  return s;
}

var<workgroup> wg_stash: u32;

${entryPoint()} {
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
    // The home first: each lane reads its key's home in b1 (32 bytes) and b1's lock word. Most
    // keys live there, and a key absent from it whose away bit is clear is a miss.
    var at = NONE;
    var value = 0u;
    var known = false;
    var slow = false;
    var spilled = false;
    var stashed = false;
    let h = hv_home(key);
    if (go) {
      let q = hv_home_v4(b1, h);
      let lo = slots_v4[q];
      let hi = slots_v4[q + 1u];
      let word = masks_ro[params.lock_base + b1];
      // The home's 8 values too (the value line starts 8 16-byte words after the key line): a hit
      // at home then needs no second, dependent read.
      let vlo = slots_v4[q + 8u];
      let vhi = slots_v4[q + 9u];
      let s = hv_match8(lo, hi, key);
      if (s != NONE) {
        at = b1 * 32u + 8u * h + s;
        value = hv_pick8(vlo, vhi, s);
        known = true;
      } else {
        let far = (word & hv_far_bit(key)) != 0u;
        slow = (word & hv_away_bit(key)) != 0u;
        spilled = far && b2 != b1;
        stashed = far && stash_live && (word & STASH_BIT) != 0u;
      }
    }
${slowPath}
    if (at != NONE && !known) { value = slots_ro[hv_vw(at)]; }
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
      { modules: [gridModule, commonModule] },
    ),
  );
}

/**
 * Past the home, lane by lane: with the away bit, the next home of b1 (claims overflow there
 * first), then the other two; then, with the far bit and the key not yet found, the key's home in
 * b2, then b2's other three homes; then the stash line when flagged. The next home alone first made hits at load 0.95 3% faster, misses the same (perf-hive,
 * 8.30 against 8.54 ms and 7.83 against 7.82 ms, one H200 host type). Reading b2 only after b1 (rather
 * than with it) made hits at load 0.95 6% faster and misses 5% slower (H200, 2026-11-22,
 * perf-hive: 8.89 against 9.42 ms and 8.31 against 7.90 ms for 2^27 x 0.95 keys).
 */
const slowPath = /* wgsl */ `
    if (slow || spilled || stashed) {
      // With its away bit set: the next home first (claims overflow there first), then the other two.
      var sa = NONE;
      var sc = NONE;
      var sd = NONE;
      if (slow) {
        // Its values too, as at home: most keys away from home are here.
        let qa = hv_home_v4(b1, (h + 1u) & 3u);
        let a0 = slots_v4[qa]; let a1 = slots_v4[qa + 1u];
        let av0 = slots_v4[qa + 8u]; let av1 = slots_v4[qa + 9u];
        sa = hv_match8(a0, a1, key);
        if (sa != NONE) {
          value = hv_pick8(av0, av1, sa);
          known = true;
        }
      }
      if (slow && sa == NONE) {
        let c0 = slots_v4[hv_home_v4(b1, (h + 2u) & 3u)]; let c1 = slots_v4[hv_home_v4(b1, (h + 2u) & 3u) + 1u];
        let d0 = slots_v4[hv_home_v4(b1, (h + 3u) & 3u)]; let d1 = slots_v4[hv_home_v4(b1, (h + 3u) & 3u) + 1u];
        sc = hv_match8(c0, c1, key);
        sd = hv_match8(d0, d1, key);
      }
      // With its far bit set: in b2, the key's home first too (claims there take it first), then
      // the other three homes.
      var in2 = NONE;
      if (spilled && sa == NONE && sc == NONE && sd == NONE) {
        let qe = hv_home_v4(b2, h);
        let e0 = slots_v4[qe]; let e1 = slots_v4[qe + 1u];
        let ev0 = slots_v4[qe + 8u]; let ev1 = slots_v4[qe + 9u];
        let se = hv_match8(e0, e1, key);
        if (se != NONE) {
          in2 = 8u * h + se;
          value = hv_pick8(ev0, ev1, se);
          known = true;
        } else {
          let f0 = slots_v4[hv_home_v4(b2, (h + 1u) & 3u)]; let f1 = slots_v4[hv_home_v4(b2, (h + 1u) & 3u) + 1u];
          let g0 = slots_v4[hv_home_v4(b2, (h + 2u) & 3u)]; let g1 = slots_v4[hv_home_v4(b2, (h + 2u) & 3u) + 1u];
          let k0 = slots_v4[hv_home_v4(b2, (h + 3u) & 3u)]; let k1 = slots_v4[hv_home_v4(b2, (h + 3u) & 3u) + 1u];
          let sf = hv_match8(f0, f1, key);
          let sg = hv_match8(g0, g1, key);
          let sk = hv_match8(k0, k1, key);
          if (sf != NONE) {
            in2 = 8u * ((h + 1u) & 3u) + sf;
          } else if (sg != NONE) {
            in2 = 8u * ((h + 2u) & 3u) + sg;
          } else if (sk != NONE) {
            in2 = 8u * ((h + 3u) & 3u) + sk;
          }
        }
      }
      if (sa != NONE) {
        at = b1 * 32u + 8u * ((h + 1u) & 3u) + sa;
      } else if (sc != NONE) {
        at = b1 * 32u + 8u * ((h + 2u) & 3u) + sc;
      } else if (sd != NONE) {
        at = b1 * 32u + 8u * ((h + 3u) & 3u) + sd;
      } else if (in2 != NONE) {
        at = b2 * 32u + in2;
      } else if (stashed) {
        let line = hv_stash_bucket(key);
        let ins = hv_probe_line(line, key);
        if (ins != NONE) { at = line * 32u + ins; }
      }
    }`;
