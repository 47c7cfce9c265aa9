import { Op } from '@gpuhash/core';
import { bitHashModule, fmix32Module, type WgslModule, wgslModule } from '@gpuhash/kernels';
import { HOME_SLOTS, homeGeometry } from '../split-pointer';

/** Invocations per workgroup of every Hive kernel: a multiple of every subgroup size (no partial subgroups). */
export const WORKGROUP_SIZE = 256;

/** Operation codes of mixed batches (`apply`); pass A's mode uses the first two for plain inserts. */
export const OP_INSERT = Op.insert;
export const OP_INSERT_OR_ASSIGN = Op.insertOrAssign;
export const OP_FIND = Op.find;
export const OP_ERASE = Op.erase;

/** Modes of the op passes (uniform `mode`): insert, insertOrAssign (= their op codes), apply, drain. */
export const MODE_INSERT = 0;
export const MODE_ASSIGN = 1;
export const MODE_APPLY = 2;
export const MODE_DRAIN = 3;

/** Words of the counters buffer (device-resident totals; `sync()` reads them back). */
export const Counter = {
  size: 0,
  stash: 1,
  evictions: 2,
  lockConflicts: 3,
  lockAcquisitions: 4,
  stashedTotal: 5,
  mergeMarker: 6,
  lockedInserts: 7,
} as const;
export const COUNTER_WORDS = 16;

/**
 * The lists buffer: a header of counts, then four lists of `list_cap` entries each: inserts
 * deferred to the locked pass (batch indices), retired slots to free (global slot indices),
 * failed inserts (batch indices, RESERVED_FLAG for reserved keys), and the ops the home pass left
 * to pass A (batch indices).
 */
export const List = { deferred: 0, freed: 1, failed: 2, rest: 3 } as const;
export const LIST_COUNT = Object.keys(List).length;
export const LIST_HEADER = 4;

/**
 * Declarations every Hive kernel shares. Buckets are numbered 0..nalloc-1 in the table and
 * nalloc..nalloc+stash_lines-1 in the stash; bucket b is words 64b..64b+63 of the slots buffer
 * (two 128-byte lines), its HOMES homes one after the other, each one 32-byte sector: its
 * HOME_SLOTS keys, then their HOME_SLOTS values (slot s = HOME_SLOTS h + t: key word
 * 64b + 2 HOME_SLOTS h + t, value HOME_SLOTS words later); masks[b] is its free mask (bit s set:
 * slot s free) and masks[lock_base + b] its lock. Needs `params` (hiveParams) bound by the kernel.
 */
export const commonModule = commonModuleFor(HOME_SLOTS);

/**
 * \`commonModule\` for homes of \`homeSlots\` slots (one of HOME_SIZES): kernels written for any home
 * size are tested with each (find.ts). Named apart from the table's, so one shader never mixes two.
 */
export function commonModuleFor(homeSlots: number): WgslModule {
  const { homes } = homeGeometry(homeSlots);
  return wgslModule(
    homeSlots === HOME_SLOTS ? 'hive.common' : `hive.common.home${homeSlots}`,
    /* wgsl */ `
const EMPTY: u32 = 0xffffffffu;
const TOMBSTONE: u32 = 0xfffffffeu;
const NONE: u32 = 0xffffffffu;
const RESERVED_FLAG: u32 = 0x80000000u;
const CONTENDED_FLAG: u32 = 0x40000000u;
const HOME_SLOTS: u32 = ${homeSlots}u;

const OP_INSERT: u32 = ${OP_INSERT}u;
const OP_INSERT_OR_ASSIGN: u32 = ${OP_INSERT_OR_ASSIGN}u;
const OP_FIND: u32 = ${OP_FIND}u;
const OP_ERASE: u32 = ${OP_ERASE}u;
const MODE_APPLY: u32 = ${MODE_APPLY}u;
const MODE_DRAIN: u32 = ${MODE_DRAIN}u;

${Object.entries(Counter)
  .map(([k, v]) => `const C_${k.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}: u32 = ${v}u;`)
  .join('\n')}
const L_DEFERRED: u32 = ${List.deferred}u;
const L_FREED: u32 = ${List.freed}u;
const L_FAILED: u32 = ${List.failed}u;
const L_REST: u32 = ${List.rest}u;
const LIST_HEADER: u32 = ${LIST_HEADER}u;

/** Linear hashing: h mod n0, or h mod 2 n0 for buckets the split pointer has passed. */
fn hv_address(h: u32) -> u32 {
  let b = h & (params.n0 - 1u);
  if (b < params.split) { return h & (2u * params.n0 - 1u); }
  return b;
}
fn hv_b1(key: u32) -> u32 { return hv_address(hash_bithash1(key)); }
fn hv_b2(key: u32) -> u32 { return hv_address(hash_bithash2(key)); }
/** The candidate bucket of key that is not c (c itself when both hashes land in c). */
fn hv_other(key: u32, c: u32) -> u32 {
  let a = hv_b1(key);
  if (a != c) { return a; }
  return hv_b2(key);
}
/** The stash line a key overflows into (a bucket index past the table). */
fn hv_stash_bucket(key: u32) -> u32 { return params.nalloc + (hash_fmix32(key) & (params.stash_lines - 1u)); }
/**
 * A key's home (\`HOME_SLOTS\` slots, one 32-byte sector of its bucket), where it is placed when that
 * has room, so most finds read one 32-byte sector. The CPU twin is \`homeOf\`.
 */
fn hv_home(key: u32) -> u32 { return hash_fmix32(key) >> ${32 - Math.log2(homes)}u; }
/**
 * A bucket's lock word \`masks[lock_base + b]\`: bit 0 is the lock; the others say where its keys
 * may be, so lookups read no more than they must. All are conservative: set at every store that
 * needs them (whoever stores sets them, before the batch ends; finds run in their own dispatch),
 * kept until clear(), inherited by a split bucket's new partner and a merge's base bucket.
 * - the overflow bit: some key whose first bucket this is has been stored in its second bucket or
 *   the stash. Clear: a key can only be in its first bucket (at load 0.5, nearly every bucket).
 * - the stash bit: some such key has been stored in the stash. Clear: no stash line to read.
 * - the away filter (bits 16..31): for every such key stored in this bucket but away from its
 *   home, its two bits \`hv_away_bits(key)\`: its home's (bits 16..23: some key of that home is
 *   away from it) and one of 8 by hash (bits 24..31). A key absent from its home lacking either
 *   bit is not in this bucket: a find reads none of the bucket's other seven homes.
 * - the far filter (bits 3..15): for every such key stored in its second bucket or the stash, bit
 *   \`hv_far_bit(key)\`. A key whose bit is clear is in neither: a find reads neither.
 * At load 0.95 a bucket has about 7 keys away from home, from about a third of its homes, and 2
 * far, so about 20% and 16% of misses read on. (One bit of 16 by hash for the away filter sent 35%
 * of misses on.)
 */
const LOCK_BIT: u32 = 1u;
const OVERFLOW_BIT: u32 = 2u;
const STASH_BIT: u32 = 4u;
const FAR_BITS: u32 = 0x0000fff8u;
const AWAY_BITS: u32 = 0xffff0000u;
/** Every placement bit: overflow, stash, and both filters. */
const PLACEMENT_BITS: u32 = OVERFLOW_BIT | STASH_BIT | FAR_BITS | AWAY_BITS;
/**
 * key's two bits in the away filter: its home's, and one of 8 from fmix32 bits that neither the
 * home nor the far bit use. The filter holds a key only when it holds both. The CPU twin is
 * \`awayBits\`.
 */
fn hv_away_bits(key: u32) -> u32 {
  let f = hash_fmix32(key);
  return (1u << (16u + (f >> ${32 - Math.log2(homes)}u))) | (1u << (24u + ((f >> 20u) & 7u)));
}
/** Whether lock word \`word\`'s away filter holds key (see above). */
fn hv_may_be_away(word: u32, key: u32) -> bool {
  let bits = hv_away_bits(key);
  return (word & bits) == bits;
}
/** key's bit in the far filter: one of 13, from fmix32 bits the away bit does not use. The CPU twin is \`farBit\`. */
fn hv_far_bit(key: u32) -> u32 { return 1u << (3u + ((hash_fmix32(key) >> 12u) & 0xffu) % 13u); }
/**
 * The placement bits that storing key in global slot g (a table bucket's or a stash line's) sets
 * on the key's first bucket b1: none when g is in the key's home in b1.
 */
fn hv_placement_bits(key: u32, b1: u32, g: u32) -> u32 {
  let h = hv_home(key);
  if (g / 32u >= params.nalloc) { return OVERFLOW_BIT | STASH_BIT | hv_far_bit(key); }
  if (g / 32u != b1) { return OVERFLOW_BIT | hv_far_bit(key); }
  if ((g % 32u) / HOME_SLOTS != h) { return hv_away_bits(key); }
  return 0u;
}

/** Key and value words of global slot g = 32 b + s (see the layout above). The CPU twins are \`keyWord\` and \`valueWord\`. */
fn hv_kw(g: u32) -> u32 { return 2u * g - (g & (HOME_SLOTS - 1u)); }
fn hv_vw(g: u32) -> u32 { return hv_kw(g) + HOME_SLOTS; }
/** Word of slot s's key in bucket b. */
fn hv_key_word(b: u32, s: u32) -> u32 { return hv_kw(b * 32u + s); }

/** The lowest k set bits of m. */
fn hv_lowest_bits(m: u32, k: u32) -> u32 {
  var x = m;
  var r = 0u;
  for (var i = 0u; i < k && x != 0u; i++) {
    let low = x & (0u - x);
    r |= low;
    x ^= low;
  }
  return r;
}
/**
 * One of the free slots in m, as a bit (0: none free): the first free slot from home h's first,
 * in order and around the bucket: home h while it has room, then h + 1 (where a find away from
 * home looks first), h + 2 and on. A key away from home is then most often in the next home or
 * the one after, which finds read first. The CPU twin is the checks' \`pickSlot\`.
 */
fn hv_pick_slot(m: u32, h: u32) -> u32 {
  let first = HOME_SLOTS * h;
  let after = m & (0xffffffffu << first);
  let pool = select(m, after, after != 0u);
  return pool & (0u - pool);
}
/** The slots from home h's first up to slot s, in hv_pick_slot's order (around the bucket). */
fn hv_pick_prefix(h: u32, s: u32) -> u32 {
  let first = HOME_SLOTS * h;
  let upto = hv_low_mask(s + 1u);
  if (s >= first) { return upto & (0xffffffffu << first); }
  return upto | (0xffffffffu << first);
}
/** The slots of home h that its first min(movers, HOME_SLOTS) movers take in an empty bucket. */
fn hv_home_fill(movers: u32, h: u32) -> u32 { return hv_low_mask(min(countOneBits(movers), HOME_SLOTS)) << (HOME_SLOTS * h); }
/** Index of the r-th (from 0) set bit of m; NONE when m has r or fewer bits. */
fn hv_nth_bit(m: u32, r: u32) -> u32 {
  var x = m;
  for (var i = 0u; i < r; i++) { x &= x - 1u; }
  return firstTrailingBit(x);
}
/** Bits 0..k-1 (k <= 32). */
fn hv_low_mask(k: u32) -> u32 { return select((1u << k) - 1u, 0xffffffffu, k >= 32u); }
`,
    { requires: [bitHashModule, fmix32Module], needs: ['params'] },
  );
}
