import { type WgslModule, wgslModule } from '../compose';
import { laneMaskModule } from './mask';

/** Options of {@link cooperativeModule}. */
export interface CooperativeOptions {
  /**
   * True to build on WGSL subgroups (the device must have the `subgroups` feature); false for the
   * fallback where every invocation is its own group of one lane.
   */
  subgroups: boolean;
}

// The API both variants share: lanes and masks are relative to the calling lane's group.
const API_DOC = `
// Cooperative groups (cg_*): a group is a subgroup, or an aligned tile of one, whose lanes work
// together. Call cg_init / cg_init_tiled once at the top of the entry point, while every
// invocation of the subgroup is active. Every cg_ballot/cg_any/cg_all/cg_broadcast must be
// reached by all lanes of the group together: keep loops uniform per group (a lane with no work
// left keeps iterating until the whole group is done).`;

const SUBGROUP_CODE = /* wgsl */ `${API_DOC}
var<private> cg_lane_: u32 = 0u;
var<private> cg_size_: u32 = 1u;
var<private> cg_base_: u32 = 0u;

/** Group = the whole subgroup. lane, size: @builtin(subgroup_invocation_id), @builtin(subgroup_size). */
fn cg_init(lane: u32, size: u32) {
  cg_lane_ = lane;
  cg_size_ = size;
  cg_base_ = 0u;
}

/** Group = aligned tiles of min(tile, size) lanes, rounded down to a power of two. */
fn cg_init_tiled(lane: u32, size: u32, tile: u32) {
  let t = 1u << firstLeadingBit(max(min(tile, size), 1u));
  cg_lane_ = lane & (t - 1u);
  cg_size_ = t;
  cg_base_ = lane - cg_lane_;
}

fn cg_lane() -> u32 { return cg_lane_; }
fn cg_size() -> u32 { return cg_size_; }

/** Bit L set when group lane L is active and its pred is true. */
fn cg_ballot(pred: bool) -> vec4<u32> {
  return cg_mask_shr(subgroupBallot(pred), cg_base_) & cg_mask_below(cg_size_);
}

/** v as seen by group lane \`lane\` (which must be active); lanes may ask for different lanes. */
fn cg_broadcast(v: u32, lane: u32) -> u32 { return subgroupShuffle(v, cg_base_ + lane); }

/** cg_ballot(pred) of a group of at most 32 lanes, as one word (lanes past 31 are left out): the cheap form for hot loops. */
fn cg_ballot32(pred: bool) -> u32 {
  let b = subgroupBallot(pred);
  let q = cg_base_ >> 5u;
  let word = select(select(b.x, b.y, q == 1u), select(b.z, b.w, q == 3u), q >= 2u);
  let bits = word >> (cg_base_ & 31u);
  return select(bits & ((1u << (cg_size_ & 31u)) - 1u), bits, cg_size_ >= 32u);
}
`;

const FALLBACK_CODE = /* wgsl */ `${API_DOC}
// Fallback without the subgroups feature: every invocation is a group of one lane, so a
// cooperative loop "S lanes read a 32-slot bucket in 32/S steps" runs with S = 1 (32 steps).
const cg_sg_lane: u32 = 0u;
const cg_sg_size: u32 = 1u;

fn cg_init(lane: u32, size: u32) {}
fn cg_init_tiled(lane: u32, size: u32, tile: u32) {}
fn cg_lane() -> u32 { return 0u; }
fn cg_size() -> u32 { return 1u; }
fn cg_ballot(pred: bool) -> vec4<u32> { return vec4<u32>(select(0u, 1u, pred), 0u, 0u, 0u); }
fn cg_broadcast(v: u32, lane: u32) -> u32 { return v; }
fn cg_ballot32(pred: bool) -> u32 { return select(0u, 1u, pred); }
`;

// Built on cg_ballot, so identical in both variants.
const COMMON_CODE = /* wgsl */ `
/** Steps for the group to cover n items, cg_size() per step. */
fn cg_steps(n: u32) -> u32 { return (n + cg_size() - 1u) / cg_size(); }
/** Set lanes of m below the calling lane. */
fn cg_rank(m: vec4<u32>) -> u32 { return cg_rank_of(m, cg_lane()); }
/** Whether the calling lane is the first set lane of m. */
fn cg_is_first(m: vec4<u32>) -> bool { return cg_first_lane(m) == cg_lane(); }
/** True on exactly one active lane of the group (the lowest). */
fn cg_elect() -> bool { return cg_is_first(cg_ballot(true)); }
fn cg_any(pred: bool) -> bool { return !cg_mask_empty(cg_ballot(pred)); }
/** pred holds on every active lane of the group. */
fn cg_all(pred: bool) -> bool { return cg_mask_empty(cg_ballot(!pred)); }
`;

const subgroupVariant = wgslModule('kernels.cg.subgroups', `${SUBGROUP_CODE}${COMMON_CODE}`, [laneMaskModule], ['subgroups']);
const fallbackVariant = wgslModule('kernels.cg.fallback', `${FALLBACK_CODE}${COMMON_CODE}`, [laneMaskModule]);

/**
 * Cooperative-group primitives (`cg_*`) for any subgroup size 1..128, with the same names in both
 * variants:
 *
 * - `cg_init(lane, size)`, `cg_init_tiled(lane, size, tile)`, `cg_lane()`, `cg_size()`, `cg_steps(n)`
 * - `cg_ballot(pred) -> vec4<u32>`, `cg_ballot32(pred) -> u32` (groups of at most 32 lanes),
 *   `cg_any(pred)`, `cg_all(pred)`, `cg_elect()`
 * - `cg_broadcast(v: u32, lane) -> u32` (a shuffle: the source lane may differ per lane)
 * - `cg_rank(mask)`, `cg_is_first(mask)` and, from the mask module, `cg_popcount`, `cg_first_lane`,
 *   `cg_rank_of`, `cg_mask_below`, `cg_mask_lane`, `cg_mask_has`, `cg_mask_empty`, `cg_mask_shr`.
 *
 * With `subgroups: true` the module enables `subgroups`. With `false` each invocation is a group
 * of one, so algorithms written as "a 32-slot bucket is read by S lanes in 32/S steps" degrade to
 * S = 1. Entry points declare {@link cooperativeEntryParams} and call
 * `cg_init(cg_sg_lane, cg_sg_size)`, which compiles in both variants.
 *
 * Requirements: the workgroup size is a multiple of the subgroup size (use a multiple of 128, or
 * of `gpu.subgroups.maxSize`), so no subgroup is partial; lanes of a group stay converged at each
 * cg_ operation (tiles of one subgroup may diverge from each other, relying on drivers reconverging
 * at structured merge points).
 */
export function cooperativeModule(options: CooperativeOptions): WgslModule {
  return options.subgroups ? subgroupVariant : fallbackVariant;
}

/**
 * Entry-point parameters that bring `cg_sg_lane` and `cg_sg_size` into scope: the subgroup builtins
 * with subgroups, nothing without (the fallback module declares them as constants 0 and 1). Ends
 * with a comma when not empty; WGSL accepts a trailing comma in a parameter list.
 */
const variantModules = new Map<string, WgslModule>();

/**
 * A module written on the cg_* API, in the variant for `subgroups` (memoised per name and
 * variant): it requires the matching cooperative module and `deps.requires`; `needs` names the
 * bindings its code uses, which the including kernel declares.
 */
export function cooperativeVariantModule(
  name: string,
  subgroups: boolean,
  code: string,
  deps: { requires?: readonly WgslModule[]; needs?: readonly string[] } = {},
): WgslModule {
  const key = `${name}.${subgroups ? 'sg' : 'fb'}`;
  let m = variantModules.get(key);
  if (!m) {
    const requires = [cooperativeModule({ subgroups }), ...(deps.requires ?? [])];
    variantModules.set(key, (m = wgslModule(key, code, { requires, needs: deps.needs ?? [] })));
  }
  return m;
}

export function cooperativeEntryParams(options: CooperativeOptions): string {
  return options.subgroups ? '@builtin(subgroup_invocation_id) cg_sg_lane: u32, @builtin(subgroup_size) cg_sg_size: u32,' : '';
}
