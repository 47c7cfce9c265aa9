import { cooperativeEntryParams, cooperativeVariantModule, entryPoint, unrolled, type WgslModule } from '@gpuhash/kernels';
import { digestModule, hkvCoreModule, WORKGROUP_SIZE } from './common';

/**
 * Cooperative bucket access: a group of TILE lanes (an aligned tile of a subgroup; one invocation
 * without subgroups) works on one key at a time. Lane `l` reads the digest words (or 16-byte
 * quads of them) `q * TILE + l`: lanes side by side, so one load instruction of the tile reads a
 * contiguous run of the 128-byte line. Every result a function returns is the same on every lane
 * of the group (ballots and broadcasts), so the callers' loops stay uniform per group.
 *
 * The kernel declares `key_at(g) -> vec2<u32>` and either `digest_quad(i) -> vec4<u32>` (quads:
 * read-only readers, quad i of the digest lines) or `digest_word(i) -> u32`.
 */
// Every quad a lane covers is loaded before the first is matched (the loads are independent, so
// they are in flight together: one round trip where a loop that matched each quad before loading
// the next took one per quad), then matched in probe order from the round holding the key's start
// word (a key sits at or after it), skipping the rest once the lane has the key. G_QUADS is a
// constant, so the guards fold away.
const quadOf = (r: number) => `((q0 + ${r}u) % G_QUADS) * TILE + cg_lane()`;
const QUAD_SCAN = `let q0 = (start >> 2u) / TILE;
${unrolled(8, (r) => `  var w${r} = vec4<u32>(0u);\n  if (G_QUADS > ${r}u) { w${r} = digest_quad(b * 8u + ${quadOf(r)}); }`)}
${unrolled(8, (r) => `  if (G_QUADS > ${r}u && mine == NONE) { mine = g_match_quad(w${r}, ${quadOf(r)}, d, k, b); }`)}`;
const WORD_SCAN = /* wgsl */ `let q0 = start / TILE;
  for (var r = 0u; r < G_WORDS; r++) {
    let wi = ((q0 + r) % G_WORDS) * TILE + cg_lane();
    mine = min(mine, g_match_word(digest_word(b * 32u + wi), wi, d, k, b));
    if (G_WORDS > 1u && cg_ballot32(mine != NONE) != 0u) { break; }
  }`;

const groupCode = (quads: boolean) => /* wgsl */ `
/** Digest words per lane (32 / TILE), and 16-byte quads per lane when reading quads. */
const G_WORDS: u32 = 32u / TILE;
const G_QUADS: u32 = 8u / min(TILE, 8u);
/** Slots per lane when the group covers a bucket's 128 slots (interleaved: slot q * TILE + lane). */
const G_SLOTS: u32 = BUCKET / TILE;

fn g_bc2(v: vec2<u32>, lane: u32) -> vec2<u32> { return vec2<u32>(cg_broadcast(v.x, lane), cg_broadcast(v.y, lane)); }

/** Component q (0..3) of v, without a dynamically indexed vector. */
fn g_pick(v: vec4<u32>, q: u32) -> u32 { return select(select(v.x, v.y, q == 1u), select(v.z, v.w, q == 3u), q >= 2u); }

/** OR over the group's lanes. */
fn g_or4(v0: vec4<u32>) -> vec4<u32> {
  var v = v0;
  for (var d = 1u; d < TILE; d <<= 1u) {
    let o = cg_lane() ^ d;
    v |= vec4<u32>(cg_broadcast(v.x, o), cg_broadcast(v.y, o), cg_broadcast(v.z, o), cg_broadcast(v.w, o));
  }
  return v;
}

/**
 * (score lo, score hi, rank) ordered by score, then rank; rank NONE is no candidate (after all
 * others).
 */
fn g_before(a: vec3<u32>, b: vec3<u32>) -> bool {
  if (a.z == NONE) { return false; }
  if (b.z == NONE) { return true; }
  return a.y < b.y || (a.y == b.y && (a.x < b.x || (a.x == b.x && a.z < b.z)));
}

/** The least (by g_before) over the group's lanes. */
fn g_min3(v0: vec3<u32>) -> vec3<u32> {
  var v = v0;
  for (var d = 1u; d < TILE; d <<= 1u) {
    let o = cg_lane() ^ d;
    let w = vec3<u32>(cg_broadcast(v.x, o), cg_broadcast(v.y, o), cg_broadcast(v.z, o));
    if (g_before(w, v)) { v = w; }
  }
  return v;
}

/** The slot (0..127) among word wi's four whose digest is d and key is k, or NONE. */
fn g_match_word(word: u32, wi: u32, d: u32, k: vec2<u32>, b: u32) -> u32 {
  var m = hash_byte_match(word, d);
  while (m != 0u) {
    let s = wi * 4u + (countTrailingZeros(m) >> 3u);
    m &= m - 1u;
    if (all(key_at(b * BUCKET + s) == k)) { return s; }
  }
  return NONE;
}

/** The slot (0..127) among quad u's sixteen (words 4u..4u+3) whose digest is d and key is k, or NONE. */
fn g_match_quad(w: vec4<u32>, u: u32, d: u32, k: vec2<u32>, b: u32) -> u32 {
  var s = g_match_word(w.x, 4u * u, d, k, b);
  if (s == NONE) { s = g_match_word(w.y, 4u * u + 1u, d, k, b); }
  if (s == NONE) { s = g_match_word(w.z, 4u * u + 2u, d, k, b); }
  if (s == NONE) { s = g_match_word(w.w, 4u * u + 3u, d, k, b); }
  return s;
}

/** Key k (digest d, start word \`start\`) in bucket b: its global slot, or NONE. A key is stored at most once. */
fn g_locate(k: vec2<u32>, d: u32, b: u32, start: u32) -> u32 {
  var mine = NONE;
  ${quads ? QUAD_SCAN : WORD_SCAN}
  let hit = cg_ballot32(mine != NONE);
  if (hit == 0u) { return NONE; }
  return b * BUCKET + cg_broadcast(mine, firstTrailingBit(hit));
}

/** Dual-bucket mode: the key's global slot in its second bucket, or NONE. h is its hash. */
fn g_find_second(k: vec2<u32>, h: vec2<u32>, mask: u32) -> u32 {
  return g_locate(k, hkv_key_digest(h), hkv_bucket2(h, mask, hkv_bucket(h, mask)), hkv_start_word(h));
}

/** The key's global slot in its bucket (or either of its two: DUAL), or NONE. h is its hash. */
fn g_find_slot(k: vec2<u32>, h: vec2<u32>, mask: u32) -> u32 {
  let g1 = g_locate(k, hkv_key_digest(h), hkv_bucket(h, mask), hkv_start_word(h));
  if (!DUAL || g1 != NONE) { return g1; }
  return g_find_second(k, h, mask);
}
`;

/**
 * The group functions (`g_*`) in the variant for `subgroups`; `quads` says whether the kernel reads
 * the digest lines as 16-byte quads (a read-only binding) or words.
 */
export function groupModule(subgroups: boolean, quads: boolean): WgslModule {
  return cooperativeVariantModule(`hkv.group.${quads ? 'quads' : 'words'}`, subgroups, groupCode(quads), {
    requires: [hkvCoreModule, digestModule],
    needs: ['key_at', 'TILE', 'DUAL', quads ? 'digest_quad' : 'digest_word'],
  });
}

/**
 * A reader's lookups with the group's keys side by side (tile <= 8, quads): every member's share of
 * its digest line is loaded before any is matched, and the keys of every member's first two digest
 * matches (in the lane's quads) are loaded before any is compared. Where g_find_slot takes the
 * group's keys one after the other, two round trips each (line, then key), this takes two for the
 * group. A lane covers 8 / TILE quads of each of TILE lines: eight 16-byte quads whatever the tile.
 * `g_find_own(k, h, looked, mask)` returns the global slot of the lane's own key in its first
 * bucket, or NONE (lanes not looking: NONE). A lane with three or more digest matches for one member
 * (rare: 32 slots a lane) rescans its quads with the key loads one at a time. Keeping one candidate
 * instead of two sent most subgroups at load 1.0 down that path, and finds ran up to 50% slower.
 */
function batchLookupCode(tile: number): string {
  const quads = 8 / tile;
  const members = Array.from({ length: tile }, (_, j) => j);
  const rounds = Array.from({ length: quads }, (_, r) => r);
  const each = (f: (j: number) => string) => members.map(f).join('\n');
  const eachQuad = (f: (j: number, r: number) => string) => members.flatMap((j) => rounds.map((r) => f(j, r))).join('\n');
  // Quad r of member j's scan: its index in the line (0..7), rotated from the member's start quad.
  const quadIndex = (j: number, r: number) => `(((q${j} + ${r}u) % ${quads}u) * TILE + cg_lane())`;
  const comps = ['x', 'y', 'z', 'w'];
  return /* wgsl */ `
fn g_find_own(k: vec2<u32>, h: vec2<u32>, looked: bool, mask: u32) -> u32 {
  let live = cg_ballot32(looked);
  let b = hkv_bucket(h, mask);
  let d = hkv_key_digest(h);
  let q = (hkv_start_word(h) >> 2u) / TILE;
${each(
  (j) => `  let a${j} = ((live >> ${j}u) & 1u) != 0u;
  let b${j} = cg_broadcast(b, ${j}u);
  let d${j} = cg_broadcast(d, ${j}u);
  let q${j} = cg_broadcast(q, ${j}u);
  let k${j} = g_bc2(k, ${j}u);`,
)}
${eachQuad((j, r) => `  var w${j}_${r} = vec4<u32>(0u);\n  if (a${j}) { w${j}_${r} = digest_quad(b${j} * 8u + ${quadIndex(j, r)}); }`)}
${each(
  (j) => `  var c${j} = NONE;
  var e${j} = NONE;
  var more${j} = false;
  if (a${j}) {
${rounds
  .flatMap((r) =>
    comps.map(
      (c, ci) => `    {
      var m = hash_byte_match(w${j}_${r}.${c}, d${j});
      while (m != 0u) {
        let s = (4u * ${quadIndex(j, r)} + ${ci}u) * 4u + (countTrailingZeros(m) >> 3u);
        m &= m - 1u;
        if (c${j} == NONE) { c${j} = s; } else if (e${j} == NONE) { e${j} = s; } else { more${j} = true; }
      }
    }`,
    ),
  )
  .join('\n')}
  }`,
)}
${each(
  (j) => `  var kc${j} = vec2<u32>(0u);
  var ke${j} = vec2<u32>(0u);
  if (c${j} != NONE) { kc${j} = key_at(b${j} * BUCKET + c${j}); }
  if (e${j} != NONE) { ke${j} = key_at(b${j} * BUCKET + e${j}); }`,
)}
  var own = NONE;
${each(
  (j) => `  {
    var s = NONE;
    if (c${j} != NONE && all(kc${j} == k${j})) { s = c${j}; }
    if (e${j} != NONE && all(ke${j} == k${j})) { s = e${j}; }
${rounds.map((r) => `    if (s == NONE && more${j}) { s = g_match_quad(w${j}_${r}, ${quadIndex(j, r)}, d${j}, k${j}, b${j}); }`).join('\n')}
    let hit = cg_ballot32(s != NONE);
    let at = cg_broadcast(s, select(0u, firstTrailingBit(hit), hit != 0u));
    if (cg_lane() == ${j}u && hit != 0u) { own = b${j} * BUCKET + at; }
  }`,
)}
  return own;
}
`;
}

/** g_find_own for groups of `tile` lanes (1, 2, 4 or 8; quads): see batchLookupCode. */
export function batchLookupModule(subgroups: boolean, tile: number): WgslModule {
  if (!(tile >= 1 && tile <= 8 && Number.isInteger(Math.log2(tile))))
    throw new RangeError(`batchLookupModule: tile ${tile} is not 1, 2, 4 or 8`);
  return cooperativeVariantModule(`hkv.group.batch${tile}`, subgroups, batchLookupCode(tile), {
    requires: [groupModule(subgroups, true)],
    needs: ['key_at', 'TILE', 'DUAL', 'digest_quad'],
  });
}

/**
 * The group's claims and slot choices for the insert pass (atomic digest, key, score and claim
 * reads, from claimModule): free slots in probe order from the key's start word, and the minimum
 * score of the unclaimed slots.
 */
const INSERT_GROUP_CODE = /* wgsl */ `
/** Digest word wi's free-slot candidates (bytes equal to the empty digest) at their place in a 128-bit mask. */
fn g_empty_bits(word: u32, wi: u32) -> vec4<u32> {
  let m = hash_byte_match(word, EMPTY_DIGEST);
  let nib = ((m >> 7u) & 1u) | ((m >> 14u) & 2u) | ((m >> 21u) & 4u) | ((m >> 28u) & 8u);
  return select(vec4<u32>(0u), vec4<u32>(nib << ((wi & 7u) * 4u)), vec4<u32>(wi >> 3u) == vec4<u32>(0u, 1u, 2u, 3u));
}

/** The bucket's free-slot candidates (digest = the empty digest): bit s % 32 of word s / 32. */
fn g_empty_mask(b: u32) -> vec4<u32> {
  var acc = vec4<u32>(0u);
  for (var q = 0u; q < G_WORDS; q++) {
    let wi = q * TILE + cg_lane();
    acc |= g_empty_bits(digest_word(b * 32u + wi), wi);
  }
  return g_or4(acc);
}

/** What one read of a digest line says: the key's global slot (NONE: absent) and the free-slot candidates. */
struct LineScan {
  slot: u32,
  empty: vec4<u32>,
}

/**
 * Key k (digest d) in bucket b, and the bucket's free-slot candidates, from one read of its digest
 * line: an insertOrAssign's lookup and its claim share the line. Every word the lane covers is
 * loaded before any is matched, so the loads are in flight together.
 */
fn g_scan_line(b: u32, k: vec2<u32>, d: u32) -> LineScan {
${unrolled(32, (r) => `  var w${r} = 0u;\n  if (G_WORDS > ${r}u) { w${r} = digest_word(b * 32u + ${r}u * TILE + cg_lane()); }`)}
  var mine = NONE;
  var acc = vec4<u32>(0u);
${unrolled(
  32,
  (r) => `  if (G_WORDS > ${r}u) {
    let wi = ${r}u * TILE + cg_lane();
    acc |= g_empty_bits(w${r}, wi);
    if (mine == NONE) { mine = g_match_word(w${r}, wi, d, k, b); }
  }`,
)}
  let hit = cg_ballot32(mine != NONE);
  var slot = NONE;
  if (hit != 0u) { slot = b * BUCKET + cg_broadcast(mine, firstTrailingBit(hit)); }
  return LineScan(slot, g_or4(acc));
}

fn g_count(m: vec4<u32>) -> u32 { return dot(countOneBits(m), vec4<u32>(1u)); }

/**
 * A free slot of bucket b among the candidates m, in probe order from word \`start\`, claimed by
 * lane 0, or NONE.
 */
fn g_claim_free(b: u32, m: vec4<u32>, start: u32) -> u32 {
  let first = start * 4u;
  let q0 = first >> 5u;
  let off = first & 31u;
  for (var step = 0u; step < 5u; step++) {
    let q = (q0 + step) & 3u;
    var bits = g_pick(m, q);
    if (step == 0u) { bits &= ~((1u << off) - 1u); }
    if (step == 4u) { bits &= (1u << off) - 1u; }
    while (bits != 0u) {
      let g = b * BUCKET + q * 32u + countTrailingZeros(bits);
      bits &= bits - 1u;
      var ok = 0u;
      // A claimed candidate is free without reading its key: no stored key has the empty digest
      // (layout.ts), and a slot written in this pass keeps its writer's claim bit, so a claim that
      // succeeds finds the digest the mask was read from, written by an earlier dispatch.
      if (cg_lane() == 0u && try_claim(g)) { ok = 1u; }
      if (cg_broadcast(ok, 0u) == 1u) { return g; }
    }
  }
  return NONE;
}

/**
 * The minimum score of bucket b's unclaimed slots: (score lo, score hi, global slot), slot NONE when
 * every slot is claimed. Ties go to the first slot from claim word start / 8 on.
 */
fn g_min_victim(b: u32, start: u32) -> vec3<u32> {
  let c = vec4<u32>(
    atomicLoad(&bucket_meta[lock_base() + b * 4u]),
    atomicLoad(&bucket_meta[lock_base() + b * 4u + 1u]),
    atomicLoad(&bucket_meta[lock_base() + b * 4u + 2u]),
    atomicLoad(&bucket_meta[lock_base() + b * 4u + 3u]),
  );
  let rot = (start / 8u) * 32u;
  var best = vec3<u32>(0xffffffffu, 0xffffffffu, NONE);
  for (var q = 0u; q < G_SLOTS; q++) {
    let s = q * TILE + cg_lane();
    if (((g_pick(c, s >> 5u) >> (s & 31u)) & 1u) != 0u) { continue; }
    let sc = score_at(b * BUCKET + s);
    let cand = vec3<u32>(sc.x, sc.y, (s + BUCKET - rot) & 127u);
    if (g_before(cand, best)) { best = cand; }
  }
  best = g_min3(best);
  if (best.z == NONE) { return best; }
  return vec3<u32>(best.x, best.y, b * BUCKET + ((best.z + rot) & 127u));
}
`;

/** The insert pass's group functions (needs claimModule's functions and `bucket_meta`). */
export function insertGroupModule(subgroups: boolean): WgslModule {
  return cooperativeVariantModule('hkv.group.insert', subgroups, INSERT_GROUP_CODE, {
    requires: [groupModule(subgroups, false)],
    needs: ['try_claim', 'release', 'score_at', 'lock_base', 'bucket_meta'],
  });
}

/** The variant fields of a cooperative kernel: subgroups or not, and lanes per group (1 without subgroups). */
export interface GroupVariant {
  subgroups: boolean;
  /** Lanes per group: a power of two up to 32, at most the device's smallest subgroup; 1 without subgroups. */
  tile: number;
}

/** The entry point of a cooperative kernel, with the subgroup builtins when it has subgroups. */
export function groupEntry(subgroups: boolean): string {
  return entryPoint(WORKGROUP_SIZE, cooperativeEntryParams({ subgroups }));
}

/**
 * Runs `body` once for each lane of the group whose `pred` holds, the whole group together; `src`
 * is that lane (the body broadcasts what it needs from it). Uniform per group.
 */
export function groupQueue(pred: string, body: string): string {
  return `{
    var queue = cg_ballot32(${pred});
    loop {
      if (queue == 0u) { break; }
      let src = firstTrailingBit(queue);
      queue &= queue - 1u;
      ${body}
    }
  }`;
}

/** Whether the group copies a key's value vector together (lanes over its floats or quads) rather than each lane its own. */
export function groupCopies(v: { dim: number }): boolean {
  return v.dim >= 4;
}

/** Whether readers take the digest lines as 16-byte quads (every lane reads whole quads). */
export function readsQuads(v: GroupVariant): boolean {
  return v.tile <= 8;
}
