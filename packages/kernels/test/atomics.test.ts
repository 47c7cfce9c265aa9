import { createRng } from '@gpuhash/testing';
import { describeChecks } from '@gpuhash/testing/vitest';
import { describe, expect, it } from 'vitest';
import { atomicHelpers, cpuAddBounded, cpuCas, cpuClaimBit, cpuClaimLowest, cpuReleaseBit, lowestFreeBit } from '../src';
import { composeWgsl } from '../src/compose';
import { atomicsChecks } from './atomics.checks';

describe('atomics CPU twins', () => {
  it('lowestFreeBit agrees with a bit-by-bit scan', () => {
    const rng = createRng(31);
    for (let t = 0; t < 5000; t++) {
      const word = rng.below(4) === 0 ? 0xffffffff : rng.u32();
      const allowed = rng.below(4) === 0 ? 0 : rng.u32() | rng.u32();
      let expected = -1;
      for (let b = 31; b >= 0; b--) if (((allowed >>> b) & 1) === 1 && ((word >>> b) & 1) === 0) expected = b;
      expect(lowestFreeBit(word, allowed)).toBe(expected);
    }
  });

  it('claim and release bits, claim the lowest free bit until none is left', () => {
    const words = new Uint32Array([0b1010, 0]);
    expect(cpuClaimBit(words, 0, 0)).toBe(true);
    expect(cpuClaimBit(words, 0, 0)).toBe(false);
    expect(cpuReleaseBit(words, 0, 3)).toBe(true);
    expect(cpuReleaseBit(words, 0, 3)).toBe(false);
    expect(words[0]).toBe(0b0011);
    expect(cpuClaimBit(words, 1, 31)).toBe(true);
    expect(words[1]).toBe(0x80000000);
    const got: number[] = [];
    for (let b = cpuClaimLowest(words, 0, 0b111100); b >= 0; b = cpuClaimLowest(words, 0, 0b111100)) got.push(b);
    expect(got).toEqual([2, 3, 4, 5]);
    expect(words[0]).toBe(0b111111);
  });

  it('cas and add_bounded', () => {
    const words = new Uint32Array([5]);
    expect(cpuCas(words, 0, 4, 9)).toEqual({ oldValue: 5, done: false });
    expect(cpuCas(words, 0, 5, 9)).toEqual({ oldValue: 5, done: true });
    expect(cpuAddBounded(words, 0, 1, 10)).toEqual({ oldValue: 9, done: true });
    expect(cpuAddBounded(words, 0, 1, 10)).toEqual({ oldValue: 10, done: false });
    expect(cpuAddBounded(words, 0, 11, 10)).toEqual({ oldValue: 10, done: false });
    const top = new Uint32Array([0xfffffff0]);
    expect(cpuAddBounded(top, 0, 0x20, 0xffffffff).done).toBe(false); // no wrap-around
  });
});

describe('atomicHelpers', () => {
  it('names its module and functions after the array, and rejects non-identifiers', () => {
    const a = atomicHelpers('slots');
    const b = atomicHelpers('slots', 'slot');
    expect(a.name).not.toBe(b.name);
    expect(a.code).toMatch(/fn slots_claim_lowest\(/);
    expect(b.code).toMatch(/fn slot_cas\(i: u32, expected: u32, desired: u32\) -> AtomicResult/);
    // Two arrays in one shader: the shared result struct is emitted once.
    const src = composeWgsl('', { modules: [a, atomicHelpers('free')] });
    expect(src.match(/struct AtomicResult/g)).toHaveLength(1);
    expect(() => atomicHelpers('a[0]')).toThrow(/identifier/);
  });
});

describeChecks(atomicsChecks);
