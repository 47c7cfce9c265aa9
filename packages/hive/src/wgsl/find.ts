import type { Kernel } from '@gpuhash/core';
import { composeWgsl, cooperativeEntryParams, gridModule } from '@gpuhash/kernels';
import { cachedKernel, chunkLoop, entryPoint } from './kernel-cache';
import { lookupLanesModule } from './wcme';

/**
 * Finds, read-only: every lane owns one key, and its group looks all of them up at once with the
 * transposed WCME (first buckets, then second buckets for the keys not found yet, then stash lines
 * while the stash holds keys); each owner then reads its value, one word per hit. Plain loads of a
 * read-only binding, so nothing here is atomic and the cache serves repeated lines.
 *
 * mode 0 (find batches): out_values[i], out_found[i]. mode MODE_APPLY: the finds of a mixed batch,
 * run before its other ops (so they see the table as it was before the batch, which the mixed-batch
 * contract allows): out_values holds (value, status) pairs and only ops[i] == OP_FIND are looked up.
 * Bindings: params, slots_ro, ops, keys, out_values, out_found, counters (read), masks_ro (the meta buffer).
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
    // First buckets; then, past the first bucket only when its overflow bit (read only for keys
    // not found there) is set, second buckets and stash lines. Three call sites of the unrolled
    // scan: a loop over the three phases was slower on an H200 (hits 9.3 against 11.1 G/s).
    var at = NONE;
    let m1 = hv_lookup_lanes(b1, key, go);
    if (m1 != 0u) { at = b1 * 32u + firstTrailingBit(m1); }
    var spilled = false;
    if (go && at == NONE) { spilled = (masks_ro[params.lock_base + b1] & 2u) != 0u; }
    let go2 = go && at == NONE && b2 != b1 && spilled;
    if (cg_ballot32(go2) != 0u) {
      let m2 = hv_lookup_lanes(b2, key, go2);
      if (m2 != 0u) { at = b2 * 32u + firstTrailingBit(m2); }
    }
    let go3 = go && at == NONE && stash_live && spilled;
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
