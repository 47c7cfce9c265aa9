import { emptyMask, type LaneMask } from './mask';

/**
 * Which invocations form one cooperative group and at which lane: the CPU side of a cooperative
 * kernel, built from what the kernel recorded (which invocations share a subgroup is up to the
 * implementation, so tests observe it rather than assume it).
 */
export class LaneGrouping {
  private readonly members = new Map<number, Map<number, number>>();

  /**
   * @param groups a key per invocation; invocations with one key form a group.
   * @param lanes each invocation's lane in its group (0..127).
   * @throws Error when two invocations of a group claim one lane, or a lane is out of range.
   */
  constructor(
    readonly groups: ArrayLike<number>,
    readonly lanes: ArrayLike<number>,
  ) {
    for (let i = 0; i < groups.length; i++) {
      const key = groups[i] as number;
      const lane = lanes[i] as number;
      if (!(lane >= 0 && lane < 128)) throw new Error(`invocation ${i}: lane ${lane} is outside 0..127`);
      let group = this.members.get(key);
      if (!group) this.members.set(key, (group = new Map()));
      const other = group.get(lane);
      if (other !== undefined) throw new Error(`invocations ${other} and ${i} both are lane ${lane} of group ${key}`);
      group.set(lane, i);
    }
  }

  /** The invocation at `lane` of invocation i's group, or undefined when that lane is inactive. */
  memberAt(i: number, lane: number): number | undefined {
    return this.members.get(this.groups[i] as number)?.get(lane);
  }

  /** The active lanes of invocation i's group, as a mask. */
  activeMask(i: number): LaneMask {
    return this.ballot(i, () => true);
  }

  /** What `cg_ballot` returns to invocation i when each invocation j passes `pred(j)`. */
  ballot(i: number, pred: (j: number) => boolean): LaneMask {
    const m = emptyMask();
    for (const [lane, j] of this.members.get(this.groups[i] as number) ?? []) {
      if (pred(j)) m[lane >> 5] = (m[lane >> 5]! | (1 << (lane & 31))) >>> 0;
    }
    return m;
  }

  /** Number of distinct groups. */
  get groupCount(): number {
    return this.members.size;
  }

  /** Number of active lanes in invocation i's group. */
  sizeOf(i: number): number {
    return this.members.get(this.groups[i] as number)?.size ?? 0;
  }
}

/**
 * CPU model of `cg_ballot`: for every invocation, the four words of the mask its group's ballot
 * returns, given a predicate per invocation (non-zero is true).
 */
export function ballotModel(predicates: ArrayLike<number | boolean>, grouping: LaneGrouping): Uint32Array {
  const n = predicates.length;
  const out = new Uint32Array(n * 4);
  const cache = new Map<number, LaneMask>();
  for (let i = 0; i < n; i++) {
    const key = grouping.groups[i] as number;
    let m = cache.get(key);
    if (!m) cache.set(key, (m = grouping.ballot(i, (j) => Boolean(predicates[j]))));
    out.set(m, i * 4);
  }
  return out;
}
