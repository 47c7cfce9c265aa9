import { defineKernel, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, entryPoint, gridModule } from '@gpuhash/kernels';
import { HOME_SLOTS } from '../split-pointer';
import { commonModule, WORKGROUP_SIZE } from './common';
import { hiveParams } from './params';

if (HOME_SLOTS !== 4) throw new Error('find.ts reads a home as one 16-byte word of keys and one of values: HOME_SLOTS must be 4');

/**
 * Finds, read-only and lane by lane: no cooperation, since a lane reads one 32-byte sector where a
 * WCME scan reads a whole bucket per key (WCME measured slower here at every load on an H200).
 * Each lane first reads its key's home in its first bucket (one 32-byte sector: the home's 4 keys
 * and their 4 values) and that bucket's lock word. A key found there, or absent with both its
 * filter bits clear (away and far), is answered after that one round trip (most keys: claims take
 * slots at home first). With its away bit set, a key absent from its home reads the next home
 * (keys and values, one sector), then the two after it, then the other four, in the order claims
 * fill a bucket (\`hv_pick_slot\`); with its far bit set, the second bucket (its home there first,
 * then the whole bucket), and when the stash bit is set too, the stash line. A hit read by keys
 * only then reads its value word. Plain loads of read-only bindings, so nothing here is atomic and
 * the cache serves repeated lines.
 *
 * Shape measured on an H200 (2026-11-22): this inline form beat a version with the rest in a
 * function with early returns (hits at 0.95: 11.7 against 14.2 ms for 2^27 slots), and two keys
 * per lane were slower than one (hits at 0.5: 15.5 G/s on a faster host against 17.6). With the
 * earlier layout (a bucket's keys in one line, its values in the next), reading the home's values
 * with its keys made hits at 0.5 17% faster; here they share the keys' sector.
 *
 * mode 0 (find batches): out_values[i], out_found[i]. mode MODE_APPLY: the finds of a mixed batch,
 * run before its other ops (so they see the table as it was before the batch, which the mixed-batch
 * contract allows): out_values holds (value, status) pairs and only ops[i] == OP_FIND are looked up.
 * Bindings: params, slots_ro, ops, keys, out_values, out_found, counters (read), masks_ro (the meta
 * buffer), slots_v4 (the slots buffer again, as 16-byte words).
 */
export const findKernel = defineKernel({
  name: 'hive.find',
  workgroupSize: WORKGROUP_SIZE,
  params: hiveParams,
  bindings: {
    params: uniform(),
    slots_ro: storage('read', 'u32'),
    ops: storage('read', 'u32'),
    keys: storage('read', 'u32'),
    out_values: storage('read_write', 'u32'),
    out_found: storage('read_write', 'u32'),
    counters: storage('read', 'u32'),
    masks_ro: storage('read', 'u32'),
    slots_v4: storage('read', 'vec4<u32>'),
  },
  source: (decls) =>
    composeWgsl(
      /* wgsl */ `
${decls}

/** The index (0..3) of key among a home's 4 key words, NONE if absent (a key is stored once). */
fn hv_match4(k: vec4<u32>, key: u32) -> u32 {
  var s = NONE;
  if (k.w == key) { s = 3u; }
  if (k.z == key) { s = 2u; }
  if (k.y == key) { s = 1u; }
  if (k.x == key) { s = 0u; }
  return s;
}

/** Word s (0..3) of a home's 4 words. */
fn hv_pick4(v: vec4<u32>, s: u32) -> u32 {
  return select(select(v.x, v.y, s == 1u), select(v.z, v.w, s == 3u), s >= 2u);
}

/** Bucket b as 16-byte words: the index of home j's keys (its values are the next word). */
fn hv_home_v4(b: u32, j: u32) -> u32 { return b * 16u + 2u * (j & 7u); }

/** The first of key's slots among homes h, h + 1 (mod 8) given their key words, as 4 h' + t; NONE if absent. */
fn hv_match_pair(k0: vec4<u32>, k1: vec4<u32>, h: u32, key: u32) -> u32 {
  let a = hv_match4(k0, key);
  if (a != NONE) { return 4u * (h & 7u) + a; }
  let b = hv_match4(k1, key);
  if (b != NONE) { return 4u * ((h + 1u) & 7u) + b; }
  return NONE;
}

/** The slot (0..31) of key in bucket b, NONE if absent: the 8 homes' keys, all 8 loads in flight at once. */
fn hv_probe_line(b: u32, key: u32) -> u32 {
  let k0 = slots_v4[hv_home_v4(b, 0u)]; let k1 = slots_v4[hv_home_v4(b, 1u)];
  let k2 = slots_v4[hv_home_v4(b, 2u)]; let k3 = slots_v4[hv_home_v4(b, 3u)];
  let k4 = slots_v4[hv_home_v4(b, 4u)]; let k5 = slots_v4[hv_home_v4(b, 5u)];
  let k6 = slots_v4[hv_home_v4(b, 6u)]; let k7 = slots_v4[hv_home_v4(b, 7u)];
  var s = hv_match_pair(k6, k7, 6u, key);
  let c = hv_match_pair(k4, k5, 4u, key);
  if (c != NONE) { s = c; }
  let d = hv_match_pair(k2, k3, 2u, key);
  if (d != NONE) { s = d; }
  let e = hv_match_pair(k0, k1, 0u, key);
  if (e != NONE) { s = e; }
  return s;
}

var<workgroup> wg_stash: u32;

${entryPoint(WORKGROUP_SIZE)} {
  if (lid == 0u) { wg_stash = counters[C_STASH]; }
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  let apply = params.mode == MODE_APPLY;
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
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
    // The home first: each lane reads its key's home in b1 (one 32-byte sector: 4 keys, then
    // their values) and b1's lock word. Most keys live there, and a key absent from it whose away
    // bit is clear is a miss.
    var at = NONE;
    var value = 0u;
    var known = false;
    var slow = false;
    var spilled = false;
    var stashed = false;
    let h = hv_home(key);
    if (go) {
      let q = hv_home_v4(b1, h);
      let k = slots_v4[q];
      let v = slots_v4[q + 1u];
      let word = masks_ro[params.lock_base + b1];
      let s = hv_match4(k, key);
      if (s != NONE) {
        at = b1 * 32u + HOME_SLOTS * h + s;
        value = hv_pick4(v, s);
        known = true;
      } else {
        let far = (word & hv_far_bit(key)) != 0u;
        slow = hv_may_be_away(word, key);
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
});

/**
 * Past the home, lane by lane: with the away bit, the next home of b1 with its values (claims
 * overflow there first), then the two after it, then the other four; then, with the far bit and
 * the key not yet found, the key's home in b2 with its values, then all of b2 (hv_probe_line); then
 * the stash line when flagged. With the earlier layout (homes of 8 slots, keys and values in
 * separate lines), the next home alone first made hits at load 0.95 3% faster, misses the same,
 * and reading b2 only after b1 (rather than with it) made hits at 0.95 6% faster and misses 5%
 * slower (H200, 2026-11-22, perf-hive).
 */
const slowPath = /* wgsl */ `
    if (slow || spilled || stashed) {
      var in1 = NONE;
      if (slow) {
        // Its values too, as at home: most keys away from home are here.
        let qa = hv_home_v4(b1, h + 1u);
        let ka = slots_v4[qa];
        let va = slots_v4[qa + 1u];
        let sa = hv_match4(ka, key);
        if (sa != NONE) {
          in1 = HOME_SLOTS * ((h + 1u) & 7u) + sa;
          value = hv_pick4(va, sa);
          known = true;
        } else {
          in1 = hv_match_pair(slots_v4[hv_home_v4(b1, h + 2u)], slots_v4[hv_home_v4(b1, h + 3u)], h + 2u, key);
          if (in1 == NONE) {
            let k4 = slots_v4[hv_home_v4(b1, h + 4u)]; let k5 = slots_v4[hv_home_v4(b1, h + 5u)];
            let k6 = slots_v4[hv_home_v4(b1, h + 6u)]; let k7 = slots_v4[hv_home_v4(b1, h + 7u)];
            in1 = hv_match_pair(k4, k5, h + 4u, key);
            let far6 = hv_match_pair(k6, k7, h + 6u, key);
            if (in1 == NONE) { in1 = far6; }
          }
        }
      }
      // With its far bit set: in b2, the key's home first too (claims there take it first), then
      // the whole bucket.
      var in2 = NONE;
      if (spilled && in1 == NONE) {
        let qe = hv_home_v4(b2, h);
        let ke = slots_v4[qe];
        let ve = slots_v4[qe + 1u];
        let se = hv_match4(ke, key);
        if (se != NONE) {
          in2 = HOME_SLOTS * h + se;
          value = hv_pick4(ve, se);
          known = true;
        } else {
          // The whole bucket (its home again, a sector just read).
          in2 = hv_probe_line(b2, key);
        }
      }
      if (in1 != NONE) {
        at = b1 * 32u + in1;
      } else if (in2 != NONE) {
        at = b2 * 32u + in2;
      } else if (stashed) {
        let line = hv_stash_bucket(key);
        let ins = hv_probe_line(line, key);
        if (ins != NONE) { at = line * 32u + ins; }
      }
    }`;
