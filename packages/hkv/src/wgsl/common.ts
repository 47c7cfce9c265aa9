import { type BindingsLayout, storage } from '@gpuhash/core';
import { fmix64Module, u64Module, u64OrderModule, wgslModule } from '@gpuhash/kernels';
import { EMPTY_DIGEST } from '../layout';
import { HkvStatus, type ScorePolicy } from '../types';

/** Invocations per workgroup of every HKV kernel (one key, or one slot, per invocation). */
export const WORKGROUP_SIZE = 64;

/** Attempts of one insert invocation to claim a slot of a contended bucket before it reports busy. */
export const MAX_ATTEMPTS = 64;

export const POLICY_CODES: Record<ScorePolicy, number> = { lru: 0, lfu: 1, epochLru: 2, epochLfu: 3, custom: 4 };

/** The params every per-key kernel takes. */
export const opParams = {
  n: 'u32',
  mask: 'u32',
  clock_lo: 'u32',
  clock_hi: 'u32',
  epoch: 'u32',
} as const;

/**
 * Where the value vectors live: `dim` floats a slot, `sliceSlots` slots per buffer. A kernel binds
 * `slices` buffers from buffer `sliceBase` on (a window: a cache with more value buffers than one
 * kernel may bind runs its value passes once per window).
 */
export interface ValueVariant {
  dim: number;
  slices: number;
  sliceSlots: number;
  /** Slots whose values live on the device; the values of slots from here up live in host memory (the host tier). */
  deviceSlots: number;
  /** The first value buffer bound (0 unless the values span several windows). */
  sliceBase?: number;
}

/** A kernel's ValueVariant before the cache's own: one value buffer of one bucket, dim 1. */
export const VALUE_DEFAULTS = { dim: 1, slices: 1, sliceSlots: 128, deviceSlots: 128, sliceBase: 0 };

/** The value buffers' bindings, `v0`..: read-only or read-write arrays of f32. */
export function sliceBindings(slices: number, access: 'read' | 'read_write', prefix = 'v', element = 'f32'): BindingsLayout {
  const out: Record<string, ReturnType<typeof storage>> = {};
  for (let s = 0; s < slices; s++) out[`${prefix}${s}`] = storage(access, element);
  return out;
}

/**
 * How a kernel moves value vectors: as 16-byte quads when dim is a multiple of 4 (`VAL` is
 * vec4<f32>, `VW` = dim / 4 per vector), else as floats (`VAL` f32, `VW` = dim). The value buffers,
 * and the batch's value arrays, are then bound as arrays of `element`.
 */
export function valueWords(dim: number): { quads: boolean; element: string; wgsl: string } {
  const quads = dim % 4 === 0;
  const element = quads ? 'vec4<f32>' : 'f32';
  return { quads, element, wgsl: `alias VAL = ${element};\nconst VW: u32 = ${quads ? dim / 4 : dim}u;` };
}

/**
 * `fn NAME_load(slot, j) -> f32` (and `NAME_store(slot, j, x)` when writable) over the value
 * buffers `PREFIX0..`: slot `g`'s vector is at `(g % sliceSlots) * dim` of buffer
 * `g / sliceSlots - sliceBase`. WGSL cannot index bindings, so a switch picks the buffer. Slots
 * whose buffer is not bound (host-tier slots, other windows) load 0 and store nothing;
 * `fn NAME_here(slot) -> bool` tells which are bound, `NAME_elsewhere` which are in another window.
 */
export function sliceAccessors(v: ValueVariant, writable: boolean, prefix = 'v', name = 'val', quads = false): string {
  const base = v.sliceBase ?? 0;
  const width = quads ? v.dim / 4 : v.dim;
  const type = quads ? 'vec4<f32>' : 'f32';
  const cases = (body: (b: string) => string) => {
    if (v.slices === 1) return body(`${prefix}0`);
    const arms = [];
    for (let s = 1; s < v.slices; s++) arms.push(`    case ${s}u: { ${body(`${prefix}${s}`)} }`);
    return `switch (s) {\n${arms.join('\n')}\n    default: { ${body(`${prefix}0`)} }\n  }`;
  };
  const head = `  let s = slot / ${v.sliceSlots}u - ${base}u;\n  let o = (slot % ${v.sliceSlots}u) * ${width}u + j;`;
  // Host-tier slots, and slots of other windows: the kernel leaves their values to the host or another pass.
  const guard = (ret: string) => `  if (!${name}_here(slot)) { return${ret}; }`;
  let out = `fn ${name}_here(slot: u32) -> bool { return slot < ${v.deviceSlots}u && slot / ${v.sliceSlots}u - ${base}u < ${v.slices}u; }\n`;
  // On the device but in another window: another pass copies its vector.
  out += `fn ${name}_elsewhere(slot: u32) -> bool { return slot < ${v.deviceSlots}u && !${name}_here(slot); }\n`;
  out += `fn ${name}_load(slot: u32, j: u32) -> ${type} {\n${guard(` ${type}()`)}\n${head}\n  ${cases((b) => `return ${b}[o];`)}\n}\n`;
  if (writable) out += `fn ${name}_store(slot: u32, j: u32, x: ${type}) {\n${guard('')}\n${head}\n  ${cases((b) => `${b}[o] = x;`)}\n}\n`;
  return out;
}

/** Constants of the layout, the statuses and the reserved keys. */
export const hkvCoreModule = wgslModule(
  'hkv.core',
  /* wgsl */ `
const BUCKET: u32 = 128u;
const NONE: u32 = 0xffffffffu;
const EMPTY_DIGEST: u32 = ${EMPTY_DIGEST}u;
const ST_NONE: u32 = ${HkvStatus.none}u;
const ST_UPDATED: u32 = ${HkvStatus.updated}u;
const ST_INSERTED: u32 = ${HkvStatus.inserted}u;
const ST_EVICTED: u32 = ${HkvStatus.evicted}u;
const ST_REFUSED: u32 = ${HkvStatus.refused}u;
const ST_BUSY: u32 = ${HkvStatus.busy}u;
const ST_DUPLICATE: u32 = ${HkvStatus.duplicate}u;
const ST_RESERVED: u32 = ${HkvStatus.reserved}u;
const ST_MISSING: u32 = ${HkvStatus.missing}u;
const ST_IGNORED: u32 = ${HkvStatus.ignored}u;
const ST_FOUND: u32 = ${HkvStatus.found}u;
// Not a result: found absent by the update pass, to be inserted by the insert pass.
const ST_PENDING: u32 = 100u;
// Set on a placed key's status while its value still has to be written into other windows of value buffers.
const VALUES_PENDING: u32 = 0x80u;
// The out buffer: 4 counter words, then one status per key, then one slot per key (the slot it was
// found in or placed in, NONE otherwise), then 5 words per evicted entry (key, score, slot).
const OUT_HEAD: u32 = 4u;
// Head word 3, set by an insert pass that evicted a slot this batch may have written (a key placed
// or updated by an earlier pass): the batch's values must then land only where their key still is.
const OUT_HAZARD: u32 = 3u;
const EV_WORDS: u32 = 5u;

// Reserved keys: (lo, hi) = (0xffffffff | 0xfffffffe | 0xfffffffd, 0xffffffff).
const EMPTY_LO: u32 = 0xffffffffu;
const RECLAIM_LO: u32 = 0xfffffffeu;
const KEY_HI_RESERVED: u32 = 0xffffffffu;

fn hkv_is_reserved(k: vec2<u32>) -> bool { return k.y == KEY_HI_RESERVED && k.x >= 0xfffffffdu; }
/** Empty or reclaimed: a slot a new key may take. */
fn hkv_is_free(k: vec2<u32>) -> bool { return k.y == KEY_HI_RESERVED && k.x >= RECLAIM_LO; }
fn hkv_hash(k: vec2<u32>) -> vec2<u32> { return hash_fmix64(k); }
fn hkv_bucket(h: vec2<u32>, mask: u32) -> u32 { return (h.x >> 7u) & mask; }
fn hkv_start_word(h: vec2<u32>) -> u32 { return (h.x & 127u) >> 2u; }
/** A hash byte as a stored digest: never EMPTY_DIGEST, which marks free slots only (see layout.ts). */
fn hkv_digest_byte(byte: u32) -> u32 { return select(byte, byte ^ 1u, byte == EMPTY_DIGEST); }
fn hkv_digest(h: vec2<u32>) -> u32 { return hkv_digest_byte(h.y & 0xffu); }
fn hkv_dual_digest(h: vec2<u32>) -> u32 { return hkv_digest_byte(h.y >> 24u); }
/** Dual-bucket mode's second bucket (hash bits 32 and up; the next bucket when it equals the first). */
fn hkv_bucket2(h: vec2<u32>, mask: u32, b1: u32) -> u32 {
  let b = h.y & mask;
  return select(b, (b + 1u) & mask, b == b1);
}
`,
  { requires: [fmix64Module, u64Module, u64OrderModule] },
);

/**
 * The score policy (`POLICY`: 0 lru, 1 lfu, 2 epochLru, 3 epochLfu, 4 custom): the score a new key
 * stores, the score a hit leaves, and whether admission control applies. Input scores are at
 * `batch[2n + 2i]` (lo, hi) when `HAS_SCORES`; otherwise an increment of 1.
 */
export const scoreModule = wgslModule(
  'hkv.score',
  /* wgsl */ `
fn in_score(i: u32) -> vec2<u32> {
  if (HAS_SCORES) { return vec2<u32>(batch[2u * params.n + 2u * i], batch[2u * params.n + 2u * i + 1u]); }
  return vec2<u32>(1u, 0u);
}
fn clock_of(i: u32) -> vec2<u32> { return hash_u64_add(vec2<u32>(params.clock_lo, params.clock_hi), vec2<u32>(i, 0u)); }
fn score_new(i: u32) -> vec2<u32> {
  switch (POLICY) {
    case 0u: { return clock_of(i); }
    case 1u: { return in_score(i); }
    case 2u: { return vec2<u32>(clock_of(i).x, params.epoch); }
    case 3u: { return vec2<u32>(in_score(i).x, params.epoch); }
    default: { return in_score(i); }
  }
}
fn score_hit(old: vec2<u32>, i: u32) -> vec2<u32> {
  switch (POLICY) {
    case 0u: { return clock_of(i); }
    case 1u: { return hash_u64_add_sat(old, in_score(i)); }
    case 2u: { return vec2<u32>(clock_of(i).x, params.epoch); }
    case 3u: { return vec2<u32>(hash_u32_add_sat(select(0u, old.x, old.y == params.epoch), in_score(i).x), params.epoch); }
    default: { return in_score(i); }
  }
}
const ADMISSION: bool = POLICY == 4u;
`,
  { requires: [u64Module, u64OrderModule], needs: ['batch', 'params', 'HAS_SCORES', 'POLICY'] },
);

/** The key's digest byte, by mode. */
export const digestModule = wgslModule(
  'hkv.digest',
  /* wgsl */ `
/** The key's digest: hash bits 32..39, or 56..63 in dual-bucket mode (DUAL). */
fn hkv_key_digest(h: vec2<u32>) -> u32 { return select(hkv_digest(h), hkv_dual_digest(h), DUAL); }
`,
  { requires: [hkvCoreModule], needs: ['DUAL'] },
);

/**
 * Looks a key up in its bucket through the digest line: `fn hkv_locate(k, h, b) -> u32`, the slot
 * (0..127) or NONE. The kernel declares `digest_word(i) -> u32` and `key_at(slot) -> vec2<u32>`
 * (plain or atomic loads, by the kernel's role).
 */
export const locateModule = wgslModule(
  'hkv.locate',
  /* wgsl */ `
/** The key's global slot (bucket * 128 + slot) in its bucket, or its two buckets (DUAL), or NONE. */
fn hkv_find_slot(k: vec2<u32>, h: vec2<u32>, mask: u32) -> u32 {
  let b1 = hkv_bucket(h, mask);
  let s1 = hkv_locate(k, h, b1);
  if (s1 != NONE) { return b1 * BUCKET + s1; }
  if (DUAL) {
    let b2 = hkv_bucket2(h, mask, b1);
    let s2 = hkv_locate(k, h, b2);
    if (s2 != NONE) { return b2 * BUCKET + s2; }
  }
  return NONE;
}

fn hkv_locate(k: vec2<u32>, h: vec2<u32>, b: u32) -> u32 {
  let d = hkv_key_digest(h);
  let start = hkv_start_word(h);
  for (var w = 0u; w < 32u; w++) {
    let wi = (start + w) & 31u;
    var m = hash_byte_match(digest_word(b * 32u + wi), d);
    while (m != 0u) {
      let s = wi * 4u + (countTrailingZeros(m) >> 3u);
      m &= m - 1u;
      if (all(key_at(b * BUCKET + s) == k)) { return s; }
    }
  }
  return NONE;
}
`,
  { requires: [hkvCoreModule, u64OrderModule, digestModule], needs: ['digest_word', 'key_at', 'DUAL'] },
);

/** The constants a per-key kernel is specialised with. */
export function opConstants(v: ValueVariant & { policy: number; hasScores: boolean; dual: boolean }): Record<string, number | boolean> {
  return { DIM: v.dim, POLICY: v.policy, HAS_SCORES: v.hasScores, DUAL: v.dual };
}
