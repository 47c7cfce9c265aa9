import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule } from '@gpuhash/kernels';
import { HOME_SLOTS, HOMES } from '../split-pointer';
import { commonModule, WORKGROUP_SIZE } from './common';
import { cachedKernel, entryPoint } from './kernel-cache';

/** 16-byte words of a home. */
const HOME_V4 = HOME_SLOTS / 4;
/**
 * Keys each lane looks up at once, their loads issued together. 2 was slower than 1 at every load
 * (H200, 2026-11-22: hits at 0.5 15.5 against 17.6 G/s), presumably from the registers it takes.
 */
export const FIND_KEYS_PER_LANE = 1;
const SPAN = WORKGROUP_SIZE * FIND_KEYS_PER_LANE;

/** `let p0 = slots_v4[q]; let p1 = ...`: count loads, written out so all are in flight at once. */
function loads(p: string, q: string, count: number, indent: string): string {
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

const helpers = /* wgsl */ `
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
${matchFn('hv_match_line', 8)}

/** The first 16-byte word of home h of bucket b's key line. */
fn hv_home_v4(b: u32, h: u32) -> u32 { return b * 16u + ${HOME_V4}u * h; }

/** The slot (0..31) of key in bucket b's key line, NONE if absent: 8 loads, all in flight at once. */
fn hv_probe_line(b: u32, key: u32) -> u32 {
  let q = b * 16u;
${loads('v', 'q', 8, '  ')}
  return hv_match_line(${args('v', 8)}, key);
}

/**
 * Past the home, for a key not found there whose home bit is set: the other homes of its first
 * bucket and, when that has overflowed, its second bucket's line, all loads in flight at once;
 * then its stash line, when the first bucket has sent keys there. Returns the global slot, NONE if absent.
 */
fn hv_probe_rest(key: u32, b1: u32, b2: u32, h: u32, spilled: bool, stashed: bool) -> u32 {
${Array.from({ length: HOMES - 1 }, (_, k) => `  let o${k} = (h + ${k + 1}u) % HOMES;\n${loads(`y${k}_`, `hv_home_v4(b1, o${k})`, HOME_V4, '  ')}`).join('\n')}
  var in2 = NONE;
  if (spilled && b2 != b1) { in2 = hv_probe_line(b2, key); }
${Array.from({ length: HOMES - 1 }, (_, k) => `  let s${k} = hv_match_home(${args(`y${k}_`, HOME_V4)}, key);\n  if (s${k} != NONE) { return b1 * 32u + HOME_SLOTS * o${k} + s${k}; }`).join('\n')}
  if (in2 != NONE) { return b2 * 32u + in2; }
  if (stashed) {
    let line = hv_stash_bucket(key);
    let s = hv_probe_line(line, key);
    if (s != NONE) { return line * 32u + s; }
  }
  return NONE;
}
`;

/** The lookups of one item of the lane's ${FIND_KEYS_PER_LANE}, suffixed: issue (loads only) and settle. */
function itemCode(x: string, offset: number): { issue: string; settle: string; finish: string } {
  return {
    // No branch between the items' loads: every lane reads (a dummy key reads a real bucket).
    issue: `
    let local_${x} = base + ${offset}u + lid;
    let i_${x} = params.aux1 + local_${x};
    var key_${x} = EMPTY;
    var go_${x} = false;
    if (local_${x} < params.n && (!apply || ops[i_${x}] == OP_FIND)) {
      key_${x} = keys[i_${x}];
      // Reserved keys (device batches are not validated for finds) are never found.
      go_${x} = key_${x} < TOMBSTONE;
    }
    let b1_${x} = hv_b1(key_${x});
    let h_${x} = hv_home(key_${x});
    let q_${x} = hv_home_v4(b1_${x}, h_${x});
${loads(`x_${x}_`, `q_${x}`, HOME_V4, '    ')}
    let word_${x} = masks_ro[params.lock_base + b1_${x}];`,
    settle: `
    var at_${x} = NONE;
    if (go_${x}) {
      let s = hv_match_home(${args(`x_${x}_`, HOME_V4)}, key_${x});
      if (s != NONE) {
        at_${x} = b1_${x} * 32u + HOME_SLOTS * h_${x} + s;
      } else if ((word_${x} & (4u << h_${x})) != 0u) {
        let w = word_${x};
        at_${x} = hv_probe_rest(key_${x}, b1_${x}, hv_b2(key_${x}), h_${x}, (w & 2u) != 0u, stash_live && (w & 64u) != 0u);
      }
    }
    var value_${x} = 0u;
    if (at_${x} != NONE) { value_${x} = slots_ro[hv_vw(at_${x})]; }`,
    finish: `
    {
      let found = select(0u, 1u, at_${x} != NONE);
      let value = value_${x};
      if (apply) {
        if (local_${x} < params.n && ops[i_${x}] == OP_FIND) {
          out_values[2u * i_${x}] = value;
          out_values[2u * i_${x} + 1u] = found;
        }
      } else if (local_${x} < params.n) {
        out_values[i_${x}] = value;
        out_found[i_${x}] = found;
      }
    }`,
  };
}

/**
 * Finds, read-only, lane by lane (no cooperation: a lane reads 32 bytes where a WCME scan reads a
 * line per key). Each lane takes ${FIND_KEYS_PER_LANE} keys and for each first reads its home in the first
 * bucket (one 32-byte sector) and that bucket's lock word. A key found there, or absent with its
 * home bit clear, is answered after that one read (most keys: claims take slots at home first).
 * The others read the rest of the first bucket and, when the overflow bit says so, the second
 * bucket's line, then (when the stash bit says so) the stash line; each hit then reads its value word. Plain loads of
 * read-only bindings, so nothing here is atomic and the cache serves repeated lines.
 *
 * mode 0 (find batches): out_values[i], out_found[i]. mode MODE_APPLY: the finds of a mixed batch,
 * run before its other ops (so they see the table as it was before the batch, which the mixed-batch
 * contract allows): out_values holds (value, status) pairs and only ops[i] == OP_FIND are looked up.
 * Dispatch ceil(n / ${FIND_KEYS_PER_LANE}) invocations (\`findInvocations\`).
 * Bindings: params, slots_ro, ops, keys, out_values, out_found, counters (read), masks_ro (the meta
 * buffer), slots_v4 (the slots buffer again, as 16-byte words).
 */
export function findKernel(): Kernel {
  const items = Array.from({ length: FIND_KEYS_PER_LANE }, (_, j) => itemCode(String.fromCharCode(97 + j), j * WORKGROUP_SIZE));
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
${helpers}
var<workgroup> wg_stash: u32;

${entryPoint()} {
  if (lid == 0u) { wg_stash = counters[C_STASH]; }
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  let apply = params.mode == MODE_APPLY;
  // Batch entries aux1 .. aux1 + n - 1, ${SPAN} per workgroup and round.
  for (var base = grid_workgroup(wid, nwg) * ${SPAN}u; base < params.n; base += grid_threads(nwg, ${SPAN}u)) {
${items.map((c) => c.issue).join('\n')}
${items.map((c) => c.settle).join('\n')}
${items.map((c) => c.finish).join('\n')}
  }
}
`,
      { modules: [gridModule, commonModule] },
    ),
  );
}

/** Invocations of a find dispatch over n keys. */
export function findInvocations(n: number): number {
  return Math.ceil(n / FIND_KEYS_PER_LANE);
}
