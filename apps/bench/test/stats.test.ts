import { describe, expect, it } from 'vitest';
import { gops, median, summarize } from '../src/stats';

describe('statistics', () => {
  it('takes the median of odd and even counts, unsorted', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(() => median([])).toThrow(RangeError);
  });

  it('summarizes repetitions with their relative spread', () => {
    expect(summarize([10, 12, 8, 11, 9])).toEqual({ median: 10, min: 8, max: 12, spread: 0.4, n: 5 });
    expect(summarize([5, 5]).spread).toBe(0);
    expect(summarize([0, 0]).spread).toBe(0);
  });

  it('turns operations and milliseconds into billions per second', () => {
    expect(gops(2e9, 1000)).toBe(2);
    expect(gops(1 << 20, 0.5)).toBeCloseTo(2.097152);
    expect(gops(100, 0)).toBeNull();
  });
});
