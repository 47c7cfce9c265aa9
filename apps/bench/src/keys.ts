import { fmix32 } from '@gpuhash/kernels';

/**
 * The benchmark key streams (DESIGN.md, Benchmarks): the j-th key is fmix32(2j+1), the j-th miss
 * fmix32(2j+2), so hits and misses never collide (fmix32 is a bijection and 2j+1 is odd), and the
 * j-th value is a bijection of j, so a wrong value is never mistaken for a right one.
 * These are the CPU twins of the WGSL in gpu/streams.ts.
 */
export function benchKey(j: number): number {
  return fmix32((2 * j + 1) >>> 0);
}

export function benchMiss(j: number): number {
  return fmix32((2 * j + 2) >>> 0);
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
 * The stream indices whose key is reserved: `hits` are the j with fmix32(2j+1) reserved,
 * `misses` the j with fmix32(2j+2) reserved. A run must stay below all of them.
 */
export function reservedIndices(reserved: readonly number[]): { hits: number[]; misses: number[] } {
  const hits: number[] = [];
  const misses: number[] = [];
  for (const key of reserved) {
    const x = fmix32Inverse(key);
    if (x % 2 === 1) hits.push((x - 1) / 2);
    else misses.push((x - 2) / 2 >= 0 ? (x - 2) / 2 : 0x7fffffff);
  }
  return { hits, misses };
}

/** Throws when a key index below `count` (hits or misses) maps to one of the reserved keys. */
export function assertNoReservedKeysBelow(count: number, reserved: readonly number[], table: string): void {
  const { hits, misses } = reservedIndices(reserved);
  const clash = [...hits, ...misses].filter((j) => j < count);
  if (clash.length > 0) {
    throw new Error(`${table}: key index ${Math.min(...clash)} maps to a reserved key; runs are limited to ${Math.min(...clash)} keys`);
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
    const x = fmix32Inverse(keys[i] as number);
    const j = (x - 1) / 2;
    const want = x % 2 === 1 && j < foundTo;
    const found = (answers.found[i] ?? 0) !== 0;
    if (found !== want || (want && answers.values[i] !== benchValue(j))) {
      if (wrong++ === 0) firstWrong = i;
    }
  }
  return { wrong, firstWrong };
}
