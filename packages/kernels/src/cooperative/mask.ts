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

// Written with component selects, never an index computed at run time: a vector indexed
// dynamically may be spilled to memory (seen on NVIDIA through Vulkan), which made every ballot
// of a hash-table probe a round trip to local memory.

/** Lowest set lane of m, or CG_NO_LANE. */
fn cg_first_lane(m: vec4<u32>) -> u32 {
  if (m.x != 0u) { return firstTrailingBit(m.x); }
  if (m.y != 0u) { return 32u + firstTrailingBit(m.y); }
  if (m.z != 0u) { return 64u + firstTrailingBit(m.z); }
  if (m.w != 0u) { return 96u + firstTrailingBit(m.w); }
  return CG_NO_LANE;
}

/** The mask of lanes 0..n-1 (n <= 128). */
fn cg_mask_below(n: u32) -> vec4<u32> {
  let lo = vec4<u32>(0u, 32u, 64u, 96u);
  let nv = vec4<u32>(n);
  let part = (vec4<u32>(1u) << ((nv - lo) & vec4<u32>(31u))) - vec4<u32>(1u);
  return select(select(vec4<u32>(0u), part, nv > lo), vec4<u32>(0xffffffffu), nv >= lo + vec4<u32>(32u));
}

/** The mask with only \`lane\` set (empty when lane >= 128). */
fn cg_mask_lane(lane: u32) -> vec4<u32> {
  let bit = vec4<u32>(1u << (lane & 31u));
  return select(vec4<u32>(0u), bit, vec4<u32>(lane >> 5u) == vec4<u32>(0u, 1u, 2u, 3u));
}

fn cg_mask_has(m: vec4<u32>, lane: u32) -> bool { return !cg_mask_empty(m & cg_mask_lane(lane)); }

/** Set bits of m below \`lane\`: the rank of lane among the lanes of m. */
fn cg_rank_of(m: vec4<u32>, lane: u32) -> u32 { return cg_popcount(m & cg_mask_below(lane)); }

/** m shifted towards lane 0 by n lanes (n < 128): how a tile's bits are cut out of a subgroup ballot. */
fn cg_mask_shr(m: vec4<u32>, n: u32) -> vec4<u32> {
  let ws = n >> 5u;
  let b = n & 31u;
  // Whole words first, then the bits within them.
  var a = m;
  if (ws == 1u) { a = vec4<u32>(m.y, m.z, m.w, 0u); }
  if (ws == 2u) { a = vec4<u32>(m.z, m.w, 0u, 0u); }
  if (ws >= 3u) { a = vec4<u32>(m.w, 0u, 0u, 0u); }
  // A shift by 32 is not defined in WGSL, hence the guard for b == 0.
  if (b == 0u) { return a; }
  return (a >> vec4<u32>(b)) | (vec4<u32>(a.y, a.z, a.w, 0u) << vec4<u32>(32u - b));
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

/** CPU twin of WGSL's \`countOneBits\` on a u32. */
export function countOneBits(x: number): number {
  let v = x >>> 0;
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** CPU twin of `cg_popcount`. */
export function maskPopcount(m: ArrayLike<number>): number {
  let c = 0;
  for (let w = 0; w < 4; w++) c += countOneBits(m[w] ?? 0);
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
