import { fmix64Words, type U64Words } from '@gpuhash/kernels';

/**
 * The cache's geometry and its CPU twins: which bucket a key lands in, where its probe starts, its
 * one-byte digest, and the reserved keys. The WGSL in `wgsl/common.ts` computes the same bits.
 */

/** Slots per bucket: the 128 one-byte digests of a bucket fill one 128-byte line. */
export const BUCKET_SLOTS = 128;
/** u32 words of digests per bucket (4 digests a word). */
export const DIGEST_WORDS = BUCKET_SLOTS / 4;
/** u32 words of claim bits per bucket (one bit a slot). */
export const LOCK_WORDS = BUCKET_SLOTS / 32;

/** The reserved keys as (lo, hi) words: empty slot, reclaimed slot (an erased key), locked. */
export const EMPTY_KEY: U64Words = [0xffffffff, 0xffffffff];
export const RECLAIM_KEY: U64Words = [0xfffffffe, 0xffffffff];
export const LOCKED_KEY: U64Words = [0xfffffffd, 0xffffffff];
/** The reserved keys as bigints: `0xFFFF_FFFF_FFFF_FFFD` and up. */
export const RESERVED_KEYS = {
  empty: 0xffff_ffff_ffff_ffffn,
  reclaimed: 0xffff_ffff_ffff_fffen,
  locked: 0xffff_ffff_ffff_fffdn,
} as const;
export const RESERVED_NAMES = 'empty, reclaimed and locked';

/** Whether (lo, hi) is one of the three reserved keys. */
export function isReservedKey(lo: number, hi: number): boolean {
  return hi >>> 0 === 0xffffffff && lo >>> 0 >= 0xfffffffd;
}

/** The key's 64-bit hash: MurmurHash3's fmix64, as NVIDIA's library uses. */
export function keyHash(lo: number, hi: number): U64Words {
  return fmix64Words(lo, hi);
}

/** The bucket of a key in a cache of `buckets` buckets (a power of two): hash bits 7 and up. */
export function bucketOf(lo: number, hi: number, buckets: number): number {
  return (keyHash(lo, hi)[0] >>> 7) & (buckets - 1);
}

/** The digest word a probe starts at (hash bits 2..6: the start slot rounded down to 4). */
export function startWordOf(lo: number, hi: number): number {
  return (keyHash(lo, hi)[0] & 127) >>> 2;
}

/** A key's hash byte a digest is taken from: hash bits 32..39, or 56..63 in dual-bucket mode. */
export function hashByteOf(lo: number, hi: number, dual = false): number {
  const h = keyHash(lo, hi)[1];
  return dual ? h >>> 24 : h & 0xff;
}

/**
 * The digest free slots carry: the single-mode hash byte of the empty key. No stored key carries it
 * (see `digestOf`), so a slot whose digest is this byte is free, or being written by the invocation
 * that holds its claim.
 */
export const EMPTY_DIGEST = hashByteOf(EMPTY_KEY[0], EMPTY_KEY[1]);

/**
 * A key's one-byte digest: hash bits 32..39, as NVIDIA's library takes them; in dual-bucket mode
 * bits 56..63, which do not overlap the second bucket's bits. A key whose byte equals
 * `EMPTY_DIGEST` takes that byte with its lowest bit flipped: an inserter that claimed such a key's
 * slot as a free one would have to release it again, and a claim released within a pass makes
 * concurrent inserters skip that slot's score when they look for the bucket's minimum.
 */
export function digestOf(lo: number, hi: number, dual = false): number {
  const byte = hashByteOf(lo, hi, dual);
  return byte === EMPTY_DIGEST ? byte ^ 1 : byte;
}

/** Dual-bucket mode's second bucket: hash bits 32 and up, moved to the next bucket when it equals the first. */
export function bucket2Of(lo: number, hi: number, buckets: number): number {
  const b1 = bucketOf(lo, hi, buckets);
  const b2 = keyHash(lo, hi)[1] & (buckets - 1);
  return b2 === b1 ? (b2 + 1) & (buckets - 1) : b2;
}

/** How the value vectors are split across buffers: `sliceSlots` slots (whole buckets) per buffer. */
export interface ValueSplit {
  /** Slots per value buffer, a multiple of 128. */
  sliceSlots: number;
  /** Value buffers. */
  slices: number;
}

/**
 * The value split for `capacity` slots of `dim` floats when one buffer binding holds at most
 * `bindingBytes`: as many whole buckets per buffer as fit.
 */
export function valueSplit(capacity: number, dim: number, bindingBytes: number): ValueSplit {
  const bucketBytes = BUCKET_SLOTS * dim * 4;
  const bucketsPerSlice = Math.max(1, Math.floor(bindingBytes / bucketBytes));
  const buckets = capacity / BUCKET_SLOTS;
  const perSlice = Math.min(bucketsPerSlice, buckets);
  return { sliceSlots: perSlice * BUCKET_SLOTS, slices: Math.ceil(buckets / perSlice) };
}

/** Rounds a slot count up to a power-of-two number of buckets (at least one). */
export function roundCapacity(slots: number): number {
  let buckets = 1;
  while (buckets * BUCKET_SLOTS < slots) buckets *= 2;
  return buckets * BUCKET_SLOTS;
}
