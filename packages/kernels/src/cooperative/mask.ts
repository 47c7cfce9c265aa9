import { wgslModule } from '../compose';

/**
 * Lane masks: one bit per lane of a cooperative group, 128 lanes in a `vec4<u32>` (the layout of
 * WGSL's `subgroupBallot`: lane L is bit L % 32 of word L / 32). Pure arithmetic, no subgroup
 * operation, so both cooperative variants share it.
 */
export const laneMaskModule = wgslModule(
  'kernels.cg.mask',
  /* wgsl */ `
/** Returned by cg_first_lane for an empty mask. */
const CG_NO_LANE: u32 = 0xffffffffu;

fn cg_popcount(m: vec4<u32>) -> u32 { return dot(countOneBits(m), vec4<u32>(1u)); }

fn cg_mask_empty(m: vec4<u32>) -> bool { return all(m == vec4<u32>(0u)); }

/** Lowest set lane of m, or CG_NO_LANE. */
fn cg_first_lane(m: vec4<u32>) -> u32 {
  for (var w = 0u; w < 4u; w++) {
    if (m[w] != 0u) { return w * 32u + firstTrailingBit(m[w]); }
  }
  return CG_NO_LANE;
}

/** The mask of lanes 0..n-1 (n <= 128). */
fn cg_mask_below(n: u32) -> vec4<u32> {
  var r = vec4<u32>(0u);
  for (var w = 0u; w < 4u; w++) {
    let lo = w * 32u;
    if (n >= lo + 32u) { r[w] = 0xffffffffu; } else if (n > lo) { r[w] = (1u << (n - lo)) - 1u; }
  }
  return r;
}

/** The mask with only \`lane\` set (empty when lane >= 128). */
fn cg_mask_lane(lane: u32) -> vec4<u32> {
  var r = vec4<u32>(0u);
  if (lane < 128u) { r[lane >> 5u] = 1u << (lane & 31u); }
  return r;
}

fn cg_mask_has(m: vec4<u32>, lane: u32) -> bool { return lane < 128u && (m[lane >> 5u] & (1u << (lane & 31u))) != 0u; }

/** Set bits of m below \`lane\`: the rank of lane among the lanes of m. */
fn cg_rank_of(m: vec4<u32>, lane: u32) -> u32 { return cg_popcount(m & cg_mask_below(lane)); }

/** m shifted towards lane 0 by n lanes (n < 128): how a tile's bits are cut out of a subgroup ballot. */
fn cg_mask_shr(m: vec4<u32>, n: u32) -> vec4<u32> {
  let ws = n >> 5u;
  let b = n & 31u;
  var r = vec4<u32>(0u);
  for (var w = 0u; w + ws < 4u; w++) {
    var x = m[w + ws] >> b;
    // A shift by 32 is not defined in WGSL, hence the guard for b == 0.
    if (b != 0u && w + ws + 1u < 4u) { x |= m[w + ws + 1u] << (32u - b); }
    r[w] = x;
  }
  return r;
}
`,
);

/** A lane mask on the CPU: four u32 words, lane L is bit L % 32 of word L / 32. */
export type LaneMask = [number, number, number, number];

/** CPU twin of the WGSL `CG_NO_LANE`. */
export const CG_NO_LANE = 0xffffffff;

/** An empty mask. */
export function emptyMask(): LaneMask {
  return [0, 0, 0, 0];
}

function popcount32(x: number): number {
  let v = x >>> 0;
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** CPU twin of `cg_popcount`. */
export function maskPopcount(m: ArrayLike<number>): number {
  let c = 0;
  for (let w = 0; w < 4; w++) c += popcount32(m[w] ?? 0);
  return c;
}

/** CPU twin of `cg_first_lane`: lowest set lane, or CG_NO_LANE. */
export function maskFirstLane(m: ArrayLike<number>): number {
  for (let w = 0; w < 4; w++) {
    const x = (m[w] ?? 0) >>> 0;
    if (x !== 0) return w * 32 + (31 - Math.clz32(x & -x));
  }
  return CG_NO_LANE;
}

/** CPU twin of `cg_mask_below`: lanes 0..n-1. */
export function maskBelow(n: number): LaneMask {
  const r = emptyMask();
  for (let w = 0; w < 4; w++) {
    const lo = w * 32;
    if (n >= lo + 32) r[w] = 0xffffffff;
    else if (n > lo) r[w] = ((1 << (n - lo)) - 1) >>> 0;
  }
  return r;
}

/** CPU twin of `cg_mask_lane`. */
export function maskLane(lane: number): LaneMask {
  const r = emptyMask();
  if (lane >= 0 && lane < 128) r[lane >> 5] = (1 << (lane & 31)) >>> 0;
  return r;
}

/** CPU twin of `cg_mask_has`. */
export function maskHas(m: ArrayLike<number>, lane: number): boolean {
  return lane >= 0 && lane < 128 && (((m[lane >> 5] ?? 0) >>> (lane & 31)) & 1) === 1;
}

/** CPU twin of `cg_rank_of`: set bits of m below `lane`. */
export function maskRank(m: ArrayLike<number>, lane: number): number {
  const below = maskBelow(lane);
  return maskPopcount(below.map((b, w) => (b & (m[w] ?? 0)) >>> 0));
}

/** CPU twin of `cg_mask_shr`. */
export function maskShr(m: ArrayLike<number>, n: number): LaneMask {
  const ws = n >>> 5;
  const b = n & 31;
  const r = emptyMask();
  for (let w = 0; w + ws < 4; w++) {
    let x = (m[w + ws] ?? 0) >>> b;
    if (b !== 0 && w + ws + 1 < 4) x |= (m[w + ws + 1] ?? 0) << (32 - b);
    r[w] = x >>> 0;
  }
  return r;
}
