import { fmix32, jenkins } from '@gpuhash/kernels';

/**
 * The geometry of a Horton table and the CPU twins of its hash functions (the WGSL in
 * wgsl/common.ts computes the same numbers, bit for bit).
 *
 * - Buckets of SLOTS = 8 slots of (u32 key, u32 value): 64 bytes, 16 words.
 * - A Type B bucket's last slot holds REMAP_KEY in its key word and the remap entry array in its
 *   value word: ENTRIES = 16 entries of ENTRY_BITS = 2 bits (one 32-bit word, so one atomic
 *   reaches it). Entry 0 is unused; entry i in 1..FUNCTIONS names the secondary function R_i.
 * - A key's tag (which entry it uses) is ((fmix32(key ^ seed) >> 16) * ENTRIES) >> 16; its primary bucket
 *   is jenkins(key ^ seed) mod the bucket count (a power of two).
 * - R_i(x, t) = (jenkins(16x + t ^ ALT_SALT) + KT[(16x + t) mod 8] * i) mod buckets, i = 1..3:
 *   the paper's modified double hashing keyed on (bucket, tag), so every key sharing an entry
 *   lands in one secondary bucket.
 */
export const SLOTS = 8;
export const WORDS_PER_BUCKET = 2 * SLOTS;
export const ENTRY_BITS = 3;
export const ENTRIES = 10;
export const FUNCTIONS = (1 << ENTRY_BITS) - 1;
export const ALT_SALT = 0x9e3779b9;
/** Odd multipliers of the double hashing (odd, so i * KT mod 2^m is distinct for i = 1..3). */
export const KT: readonly number[] = [0x3c6ef372 | 1, 0xa54ff53b, 0x510e527f, 0x9b05688d, 0x1f83d9ab, 0x5be0cd19, 0x6a09e667, 0xbb67ae85];
/** The second hash of the BCHT mode is fmix32(key ^ seed ^ BCHT_SALT). */
export const BCHT_SALT = 0x7f4a7c15;
/** Smallest bucket count (64 slots). */
export const MIN_BUCKETS = 8;

/** Buckets (a power of two, at least MIN_BUCKETS) for at least `capacity` slots. */
export function bucketCountFor(capacity: number): number {
  let b = MIN_BUCKETS;
  while (b * SLOTS < capacity) b *= 2;
  return b;
}

/** A key's primary bucket (H_primary). */
export function primaryBucket(key: number, mask: number, seed = 0): number {
  return (jenkins((key ^ seed) >>> 0) & mask) >>> 0;
}

/** A key's tag: which remap entry of its primary bucket it uses (H_tag). */
export function tagOf(key: number, seed = 0): number {
  return ((fmix32((key ^ seed) >>> 0) >>> 16) * ENTRIES) >>> 16;
}

/** R_i(x, t): the secondary bucket function i (1..FUNCTIONS) of entry t of bucket x. */
export function secondaryBucket(x: number, t: number, i: number, mask: number): number {
  const ks = (x * ENTRIES + t) >>> 0;
  return ((jenkins((ks ^ ALT_SALT) >>> 0) + Math.imul(KT[ks & 7] as number, i)) & mask) >>> 0;
}

/** The BCHT mode's second bucket of a key (its first is `primaryBucket`). */
export function bchtSecondBucket(key: number, mask: number, seed = 0): number {
  return (fmix32((key ^ seed ^ BCHT_SALT) >>> 0) & mask) >>> 0;
}

/**
 * Whether the BCHT mode places a key in its second bucket when both have the same room: the top bit
 * of the second hash, so the paper's load-balancing baseline uses each function for half the keys.
 */
export function bchtTieToSecond(key: number, seed = 0): boolean {
  return fmix32((key ^ seed ^ BCHT_SALT) >>> 0) >>> 31 === 1;
}

function poisson(lambda: number, x: number): number {
  let p = Math.exp(-lambda);
  for (let i = 1; i <= x; i++) p *= lambda / i;
  return p;
}

/** What the paper's model (§6, re-derived for 16 entries of 2 bits) expects at a load factor. */
export interface LookupModel {
  /** Buckets a lookup of a present key reads, on average. */
  hit: number;
  /** Buckets a lookup of an absent key reads, on average. */
  miss: number;
  /** Share of buckets that are Type B. */
  typeB: number;
}

/**
 * The model of buckets touched per lookup (the paper's §6, for `entries` remap entries): primary
 * hashes per bucket are Poisson(λ = load × 8); a bucket with x > 8 of them is Type B and remaps
 * x − 7 keys; a hit costs 1 + remapped / λ; a miss costs 2 when its tag's entry is set, which a
 * Type B bucket with r remapped keys does with probability 1 − (1 − 1/entries)^r.
 */
export function lookupModel(load: number, entries = ENTRIES, slots = SLOTS): LookupModel {
  const lambda = load * slots;
  let remapped = 0;
  let miss = 1;
  let typeB = 0;
  for (let x = slots + 1; x < slots + 120; x++) {
    const p = poisson(lambda, x);
    const r = x - (slots - 1);
    remapped += p * r;
    miss += p * (1 - (1 - 1 / entries) ** r);
    typeB += p;
  }
  return { hit: lambda === 0 ? 1 : 1 + remapped / lambda, miss, typeB };
}
