import type { Kernel } from '@gpuhash/core';
import { composeWgsl, cooperativeEntryParams, gridModule } from '@gpuhash/kernels';
import { cachedKernel, chunkLoop, entryPoint } from './kernel-cache';
import { lookupLanesModule } from './wcme';

/**
 * Finds, read-only: every lane owns one key and first reads its home sector (32 bytes) and its
 * first bucket's lock word; the lanes whose key is not there and may be elsewhere (the sector bit)
 * are then looked up together with the transposed WCME (first buckets, second buckets when the
 * overflow bit says so, stash lines while the stash holds keys); each owner then reads its value,
 * one word per hit. Plain loads of read-only bindings, so nothing here is atomic and the cache
 * serves repeated lines.
 *
 * mode 0 (find batches): out_values[i], out_found[i]. mode MODE_APPLY: the finds of a mixed batch,
 * run before its other ops (so they see the table as it was before the batch, which the mixed-batch
 * contract allows): out_values holds (value, status) pairs and only ops[i] == OP_FIND are looked up.
 * Bindings: params, slots_ro, ops, keys, out_values, out_found, counters (read), masks_ro (the meta
 * buffer), slots_v4 (the slots buffer again, as 16-byte words).
 */
export function findKernel(subgroups: boolean): Kernel {
  return cachedKernel('find', subgroups ? 'sg' : 'fb', () =>
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

/** The index (0..7) of key among a sector's 8 key words, NONE if absent (a key is stored once). */
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

var<workgroup> wg_stash: u32;

${entryPoint(cooperativeEntryParams({ subgroups }))} {
  cg_init_tiled(cg_sg_lane, cg_sg_size, 32u);
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
    // The home sector first: each lane reads the 32 bytes of its key's home sector in b1 and b1's
    // lock word. Most keys live there, and a key absent from it whose sector bit is clear is a miss.
    var at = NONE;
    var slow = false;
    var spilled = false;
    if (go) {
      let h = hv_home(key);
      let q = (b1 * 64u + 8u * h) / 4u;
      let lo = slots_v4[q];
      let hi = slots_v4[q + 1u];
      let word = masks_ro[params.lock_base + b1];
      let s = hv_match8(lo, hi, key);
      if (s != NONE) {
        at = b1 * 32u + 8u * h + s;
      } else {
        slow = (word & (4u << h)) != 0u;
        spilled = (word & 2u) != 0u;
      }
    }
    // The rest with the transposed WCME, for the lanes whose key may be elsewhere: the whole first
    // bucket; then, when its overflow bit is set, second buckets and stash lines. Separate call
    // sites of the unrolled scan: a loop over the phases was slower on an H200 (hits 9.3 against 11.1 G/s).
    if (cg_ballot32(slow) != 0u) {
      let m1 = hv_lookup_lanes(b1, key, slow);
      if (m1 != 0u) { at = b1 * 32u + firstTrailingBit(m1); }
    }
    let go2 = slow && at == NONE && b2 != b1 && spilled;
    if (cg_ballot32(go2) != 0u) {
      let m2 = hv_lookup_lanes(b2, key, go2);
      if (m2 != 0u) { at = b2 * 32u + firstTrailingBit(m2); }
    }
    let go3 = slow && at == NONE && stash_live && spilled;
    if (cg_ballot32(go3) != 0u) {
      let line = hv_stash_bucket(key);
      let ms = hv_lookup_lanes(line, key, go3);
      if (ms != 0u) { at = line * 32u + firstTrailingBit(ms); }
    }
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
      { modules: [gridModule, lookupLanesModule(subgroups)] },
    ),
  );
}
