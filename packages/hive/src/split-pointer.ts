import { InvalidArgumentError } from '@gpuhash/core';
import { bitHash1, bitHash2, fmix32 } from '@gpuhash/kernels';

/** Slots per bucket: one free-mask bit each. */
export const BUCKET_SLOTS = 32;

/**
 * Slots of a key's home: an eighth of its bucket, whose 4 keys and 4 values fill one 32-byte
 * sector, so a hit at home reads one sector. Homes of 8 slots (keys in one sector, values in
 * another) kept more keys at home (86% against 78% at load 0.95) but cost every hit two sectors;
 * halves of the key line (16 slots) made misses at load 0.5 slower, 25.3 against 16.9 G/s (H200,
 * 2026-11-22).
 */
export const HOME_SLOTS = 4;

/** Homes per bucket. */
export const HOMES = 32 / HOME_SLOTS;

/**
 * The home sizes the table's kernels work with: a home's keys are whole 16-byte words (bulk.ts and
 * find.ts load them 4 at a time) and a bucket has at most 8 homes (the away filter has one bit per
 * home). The table runs with HOME_SLOTS = 4; with HOME_SLOTS = 8 every Hive suite passed as well
 * (SwiftShader, when find.ts learned other sizes). Homes of 16 are not listed: find.ts reads them
 * right, but with HOME_SLOTS = 16 the suites' subgroup variants of growth, churn and bulk sequences
 * failed (not investigated).
 */
export const HOME_SIZES: readonly number[] = [4, 8];

/** Where a bucket's slots live and which home a key has, for one home size: the CPU twins of WGSL's. */
export interface HomeGeometry {
  /** Slots per home: 4, 8 or 16. */
  readonly homeSlots: number;
  /** Homes per bucket. */
  readonly homes: number;
  /** Word of global slot g's key: a bucket is 64 words, its homes one after the other, each its keys then their values (`hv_kw`). */
  keyWord(g: number): number;
  /** Word of global slot g's value: homeSlots words after its key (`hv_vw`). */
  valueWord(g: number): number;
  /** A key's home (0 .. homes - 1): the top bits of fmix32 (`hv_home`). */
  homeOf(key: number): number;
  /** A key's two bits in its first bucket's away filter: its home's (bits 16..23) and one of 8 by hash (bits 24..31) (`hv_away_bits`). */
  awayBits(key: number): number;
}

/** The geometry of homes of `homeSlots` slots: 4, 8 or 16 (HOME_SIZES and the homes of 16 that find.ts also reads). */
export function homeGeometry(homeSlots: number): HomeGeometry {
  if (homeSlots !== 4 && homeSlots !== 8 && homeSlots !== 16)
    throw new InvalidArgumentError(`homeGeometry: homes of ${homeSlots} slots: give 4, 8 or 16`);
  const homes = 32 / homeSlots;
  const shift = 32 - Math.log2(homes);
  const keyWordOf = (g: number) => 2 * g - (g & (homeSlots - 1));
  return {
    homeSlots,
    homes,
    keyWord: keyWordOf,
    valueWord: (g) => keyWordOf(g) + homeSlots,
    homeOf: (key) => fmix32(key) >>> shift,
    awayBits(key) {
      const f = fmix32(key);
      return ((1 << (16 + (f >>> shift))) | (1 << (24 + ((f >>> 20) & 7)))) >>> 0;
    },
  };
}

const geometry = homeGeometry(HOME_SLOTS);

/**
 * Word of global slot g's key in the slots buffer: a bucket is 64 words, its homes one after the
 * other, each its HOME_SLOTS keys and then their HOME_SLOTS values (one 32-byte sector). The CPU
 * twin of WGSL's `hv_kw`.
 */
export function keyWord(g: number): number {
  return geometry.keyWord(g);
}

/** Word of global slot g's value: HOME_SLOTS words after its key. The CPU twin of WGSL's `hv_vw`. */
export function valueWord(g: number): number {
  return geometry.valueWord(g);
}

/**
 * A key's home (0 .. HOMES-1): the part of its bucket it is placed in when that has room, so most
 * finds read one 32-byte sector, not the whole bucket. The top bits of fmix32 (its low bits
 * pick the stash line). The CPU twin of WGSL's `hv_home`.
 */
export function homeOf(key: number): number {
  return geometry.homeOf(key);
}

/**
 * A key's two bits in its first bucket's away filter (lock word bits 16..31), set when the key is
 * stored in that bucket away from its home: its home's (bits 16..23) and one of 8 by hash (bits
 * 24..31). The CPU twin of WGSL's `hv_away_bits`.
 */
export function awayBits(key: number): number {
  return geometry.awayBits(key);
}

/**
 * A key's bit in its first bucket's far filter (lock word bits 3..15), set when the key is stored
 * in its second bucket or the stash. The CPU twin of WGSL's `hv_far_bit`.
 */
export function farBit(key: number): number {
  return (1 << (3 + (((fmix32(key) >>> 12) & 0xff) % 13))) >>> 0;
}

/**
 * Linear hashing state (Hive IV-C): the round started with `n0` buckets (a power of two) and the
 * first `split` of them have been split since, each into itself and its partner `s + n0`. The table
 * has `n0 + split` buckets; `split < n0` always (a finished round becomes `2 * n0, 0`).
 */
export interface SplitPointer {
  readonly n0: number;
  readonly split: number;
}

/** Buckets in use under a split pointer: the round's base count plus the buckets split so far. */
export function bucketCount(p: SplitPointer): number {
  return p.n0 + p.split;
}

/** The state of a table of `buckets` buckets (>= 1), as if grown one split at a time. */
export function splitPointerFor(buckets: number): SplitPointer {
  if (!Number.isInteger(buckets) || buckets < 1)
    throw new InvalidArgumentError(`splitPointerFor: ${buckets} is not a positive bucket count`);
  let n0 = 1;
  while (n0 * 2 <= buckets) n0 *= 2;
  return { n0, split: buckets - n0 };
}

/** CPU twin of `hv_address`: a hash's bucket, `h mod n0`, or `h mod 2 n0` below the split pointer. */
export function addressOf(hash: number, p: SplitPointer): number {
  const b = (hash & (p.n0 - 1)) >>> 0;
  return b < p.split ? (hash & (2 * p.n0 - 1)) >>> 0 : b;
}

/** CPU twin of `hv_b1`/`hv_b2`: a key's two candidate buckets (they may coincide). */
export function candidateBuckets(key: number, p: SplitPointer): [number, number] {
  return [addressOf(bitHash1(key), p), addressOf(bitHash2(key), p)];
}

/** Stash lines for `allocated` table buckets: 1/64 of them (1.6% of the slots), a power of two, at least one. */
export function stashLinesFor(allocated: number): number {
  let lines = 1;
  while (lines * 2 * 64 <= allocated) lines *= 2;
  return lines;
}

/** CPU twin of `hv_stash_bucket` without the offset: the stash line a key may overflow into. */
export function stashLineOf(key: number, lines: number): number {
  return (fmix32(key) & (lines - 1)) >>> 0;
}

/** Split pointer after splitting `count` more buckets (never past the end of the round). */
export function afterSplits(p: SplitPointer, count: number): SplitPointer {
  const split = p.split + count;
  if (count < 0 || split > p.n0) throw new InvalidArgumentError(`afterSplits: ${count} splits from ${p.split} pass the round of ${p.n0}`);
  return split === p.n0 ? { n0: 2 * p.n0, split: 0 } : { n0: p.n0, split };
}

/** Split pointer of a table of `buckets` buckets reached by merging from `p` (same or previous round). */
export function afterMerges(p: SplitPointer, buckets: number): SplitPointer {
  return splitPointerFor(Math.min(buckets, bucketCount(p)));
}
