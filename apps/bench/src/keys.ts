import { fmix32 } from '@gpuhash/kernels';

/**
 * The benchmark key streams (DESIGN.md, Benchmarks): the j-th key is fmix32(2j+1), the j-th miss
 * fmix32(2j+2), and the j-th value a bijection of j, so a wrong value is never mistaken for a right
 * one. fmix32 is a bijection of the u32s: hits are the images of the odd numbers, misses those of
 * the even ones, so hits and misses never collide.
 *
 * Three of those images are keys the tables reserve (`BENCH_RESERVED`, 0xfffffffd..0xffffffff,
 * the union of every table's sentinels): hit j = 428,789,825 (0xffffffff) and 1,844,424,800
 * (0xfffffffe), and miss j = 1,363,852,737 (0xfffffffd). Such an image r is replaced by
 * fmix32(2r + 2) (mod 2^32): the miss key of index r - 2^31, one of the top three miss indices
 * 2^31 - 3 .. 2^31 - 1, which the miss stream never reaches (`MISS_LIMIT`). So, for
 * hit indices below `HIT_LIMIT` (2^31) and miss indices below `MISS_LIMIT`:
 * - every key is unique and hits and misses are disjoint: the unreplaced keys are distinct images
 *   of distinct numbers (odd ones for hits, even ones 2..2^32 - 6 for misses); the three
 *   replacements are images of 2^32 - 4, 2^32 - 2 and 0 (distinct even numbers no miss index
 *   below `MISS_LIMIT` gives);
 * - no key is reserved: the replacements are 0x4aa044bf, 0x7995c304 and 0 (tested).
 * Every other key is fmix32(2j+1) or fmix32(2j+2) as before, so results of runs that stayed below
 * the first reserved index (428,789,825 hits) are unchanged. These are the CPU twins of the WGSL in
 * gpu/streams.ts.
 */
export const HIT_LIMIT = 2 ** 31;
/** Miss indices from here on give the replacements of reserved keys: a stream stays below it. */
export const MISS_LIMIT = 2 ** 31 - 3;
/** Keys no stream produces: the union of every table's reserved u32 keys. */
export const BENCH_RESERVED: readonly number[] = [0xfffffffd, 0xfffffffe, 0xffffffff];
const FIRST_RESERVED = 0xfffffffd;

/** The stream's image of x (an odd number for hits, even for misses), reserved images replaced. */
function streamKey(x: number): number {
  const k = fmix32(x >>> 0);
  return k >= FIRST_RESERVED ? fmix32((2 * k + 2) >>> 0) : k;
}

export function benchKey(j: number): number {
  return streamKey(2 * j + 1);
}

export function benchMiss(j: number): number {
  return streamKey(2 * j + 2);
}

export function benchValue(j: number): number {
  return (Math.imul(j, 0x9e3779b1) + 0x7f4a7c15) >>> 0;
}

const M1_INVERSE = modularInverse(0x85ebca6b);
const M2_INVERSE = modularInverse(0xc2b2ae35);

function modularInverse(odd: number): number {
  // Newton's iteration doubles the correct low bits each step: 5 steps reach 32.
  let x = odd;
  for (let i = 0; i < 5; i++) x = Math.imul(x, 2 - Math.imul(odd, x));
  return x >>> 0;
}

function unshiftXor(h: number, shift: number): number {
  let x = h;
  for (let i = 0; i < Math.ceil(32 / shift); i++) x = h ^ (x >>> shift);
  return x >>> 0;
}

/** The inverse of fmix32: fmix32(fmix32Inverse(h)) === h. */
export function fmix32Inverse(h: number): number {
  let x = unshiftXor(h >>> 0, 16);
  x = Math.imul(x, M2_INVERSE) >>> 0;
  x = unshiftXor(x, 13);
  x = Math.imul(x, M1_INVERSE) >>> 0;
  return unshiftXor(x, 16);
}

/**
 * The number the stream maps to key: 2j + 1 for hit j, 2j + 2 (mod 2^32) for miss j, undoing the
 * replacement of reserved keys (a replacement is the image of 2r + 2 for a reserved r, an even
 * number of 0xfffffffc, 0xfffffffe, 0 that no miss below `MISS_LIMIT` has). The CPU twin of WGSL's
 * `key_index`.
 */
export function streamNumber(key: number): number {
  const x = fmix32Inverse(key);
  if (x % 2 === 0 && (x + 4) >>> 0 <= 4) return fmix32Inverse((((x - 2) >>> 0) >>> 1) + 0x80000000);
  return x;
}

/** Whether key is a hit key, and its stream index. */
export function benchIndex(key: number): { hit: boolean; j: number } {
  const x = streamNumber(key);
  return x % 2 === 1 ? { hit: true, j: (x - 1) / 2 } : { hit: false, j: ((x - 2) >>> 0) / 2 };
}

/**
 * Throws when a run would need more hit keys than `HIT_LIMIT` or more misses than `MISS_LIMIT`, or
 * when the table reserves a key the streams may produce (one outside `BENCH_RESERVED`).
 */
export function assertKeyStreamsCover(hits: number, misses: number, reserved: readonly number[], table: string): void {
  if (hits > HIT_LIMIT || misses > MISS_LIMIT) {
    throw new Error(`${table}: a run needs ${hits} hit and ${misses} miss keys; the key streams hold ${HIT_LIMIT} and ${MISS_LIMIT}`);
  }
  const unknown = reserved.filter((k) => !BENCH_RESERVED.includes(k >>> 0));
  if (unknown.length > 0) {
    throw new Error(
      `${table}: reserves key ${unknown[0]} that the bench's key streams may produce (they avoid only ${BENCH_RESERVED.join(', ')})`,
    );
  }
}

/**
 * Checks find answers on the host, the way the GPU check does: a hit key of index j must be found
 * with value benchValue(j) iff j < foundTo; miss keys must not be found.
 */
export function checkFindAnswers(
  keys: Uint32Array,
  answers: { values: Uint32Array; found: Uint8Array },
  foundTo: number,
): { wrong: number; firstWrong: number } {
  let wrong = 0;
  let firstWrong = -1;
  for (let i = 0; i < keys.length; i++) {
    const { hit, j } = benchIndex(keys[i] as number);
    const want = hit && j < foundTo;
    const found = (answers.found[i] ?? 0) !== 0;
    if (found !== want || (want && answers.values[i] !== benchValue(j))) {
      if (wrong++ === 0) firstWrong = i;
    }
  }
  return { wrong, firstWrong };
}
