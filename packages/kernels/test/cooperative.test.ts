import { createRng } from '@gpuhash/testing';
import { describeChecks } from '@gpuhash/testing/vitest';
import { describe, expect, it } from 'vitest';
import {
  ballotModel,
  CG_NO_LANE,
  LaneGrouping,
  maskBelow,
  maskFirstLane,
  maskHas,
  maskLane,
  maskPopcount,
  maskRank,
  maskShr,
} from '../src';
import { cooperativeEntryParams, cooperativeModule } from '../src/cooperative';
import { cooperativeChecks } from './cooperative.checks';

/** Lane masks as plain lane sets, the obvious way: the reference for the bit arithmetic. */
const lanesOf = (m: ArrayLike<number>) => [...Array(128).keys()].filter((l) => (((m[l >> 5] ?? 0) >>> (l & 31)) & 1) === 1);
const maskOf = (lanes: number[]) => {
  const m = [0, 0, 0, 0];
  for (const l of lanes) m[l >> 5] = (m[l >> 5]! | (1 << (l & 31))) >>> 0;
  return m;
};

describe('lane-mask CPU twins', () => {
  it('agree with lane-set arithmetic on random masks', () => {
    const rng = createRng(21);
    for (let t = 0; t < 3000; t++) {
      const density = rng.below(5);
      const lanes = [...Array(128).keys()].filter(() => rng.below(4) < density);
      const m = maskOf(lanes);
      const lane = rng.below(128);
      expect(maskPopcount(m)).toBe(lanes.length);
      expect(maskFirstLane(m)).toBe(lanes.length ? lanes[0] : CG_NO_LANE);
      expect(maskRank(m, lane)).toBe(lanes.filter((l) => l < lane).length);
      expect(maskHas(m, lane)).toBe(lanes.includes(lane));
      expect(maskShr(m, lane)).toEqual(maskOf(lanes.filter((l) => l >= lane).map((l) => l - lane)));
      expect(maskBelow(lane)).toEqual(maskOf([...Array(lane).keys()]));
      expect(lanesOf(maskLane(lane))).toEqual([lane]);
    }
    expect(maskBelow(128)).toEqual([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff]);
    expect(maskLane(128)).toEqual([0, 0, 0, 0]);
  });
});

describe('ballotModel and LaneGrouping', () => {
  it('give each invocation the mask of its own group', () => {
    // Two groups of four lanes, lanes shuffled in memory.
    const groups = [7, 7, 9, 7, 9, 9, 7, 9];
    const lanes = [3, 0, 1, 2, 0, 3, 1, 2];
    const pred = [1, 0, 1, 1, 0, 0, 1, 1];
    const g = new LaneGrouping(groups, lanes);
    const b = ballotModel(pred, g);
    expect([...b.subarray(0, 4)]).toEqual([0b1110, 0, 0, 0]);
    expect([...b.subarray(8, 12)]).toEqual([0b0110, 0, 0, 0]);
    expect(g.memberAt(2, 3)).toBe(5);
    expect(g.memberAt(0, 5)).toBeUndefined();
    expect(g.groupCount).toBe(2);
    expect(() => new LaneGrouping([1, 1], [2, 2])).toThrow(/both are lane 2/);
  });
});

describe('cooperativeModule', () => {
  it('offers the same functions in both variants, with subgroups enabled only in one', () => {
    const names = (code: string) => [...code.matchAll(/fn (cg_\w+)/g)].map((x) => x[1]).sort();
    const sg = cooperativeModule({ subgroups: true });
    const fb = cooperativeModule({ subgroups: false });
    expect(names(sg.code)).toEqual(names(fb.code));
    expect(sg.enables).toEqual(['subgroups']);
    expect(fb.enables).toEqual([]);
    expect(fb.code).not.toMatch(/subgroup[A-Z]/);
    expect(cooperativeEntryParams({ subgroups: false })).toBe('');
  });
});

describeChecks(cooperativeChecks);
