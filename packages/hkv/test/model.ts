import { bucketOf, HkvStatus, type ScorePolicy } from '../src';

const MAX64 = (1n << 64n) - 1n;
const MAX32 = 0xffffffffn;

export interface Entry {
  value: Float32Array;
  score: bigint;
}

/** What the model says an upsert did: statuses (inserted vs evicted may be swapped within a bucket), evicted entries. */
export interface ModelUpsert {
  status: Uint8Array;
  evicted: Map<bigint, Entry>;
  /** Buckets where concurrent inserts could make a different (equally valid) choice: compare invariants only. */
  uncertain: boolean;
}

export const keyLo = (k: bigint) => Number(k & 0xffffffffn);
export const keyHi = (k: bigint) => Number(k >> 32n);

/**
 * A CPU reference of the cache with the same buckets, policies and batch semantics (duplicates:
 * the last occurrence wins; the update pass before the insert pass; a full bucket evicts its
 * lowest scores). It is exact when each bucket's inserts are decided by scores alone: new keys
 * outscore every resident (lru, epochLru with a non-decreasing epoch) and a bucket gets at most
 * 128 new keys a batch. Otherwise (lfu, custom: new keys may evict each other in one batch) it
 * flags the batch `uncertain` and the checks fall back to invariants.
 */
export class CacheModel {
  readonly map = new Map<bigint, Entry>();
  clock = 0;
  epoch = 0;
  constructor(
    public buckets: number,
    readonly dim: number,
    readonly policy: ScorePolicy,
  ) {}

  bucket(k: bigint): number {
    return bucketOf(keyLo(k), keyHi(k), this.buckets);
  }

  get size(): number {
    return this.map.size;
  }

  private scoreNew(i: number, given: bigint | undefined): bigint {
    const clock = BigInt(this.clock + i);
    const inc = given ?? 1n;
    switch (this.policy) {
      case 'lru':
        return clock & MAX64;
      case 'lfu':
        return inc;
      case 'epochLru':
        return (BigInt(this.epoch) << 32n) | (clock & MAX32);
      case 'epochLfu':
        return (BigInt(this.epoch) << 32n) | (inc & MAX32);
      default:
        return inc;
    }
  }

  private scoreHit(old: bigint, i: number, given: bigint | undefined): bigint {
    const inc = given ?? 1n;
    switch (this.policy) {
      case 'lfu': {
        const s = old + inc;
        return s > MAX64 ? MAX64 : s;
      }
      case 'epochLfu': {
        const prev = old >> 32n === BigInt(this.epoch) ? old & MAX32 : 0n;
        const s = prev + (inc & MAX32);
        return (BigInt(this.epoch) << 32n) | (s > MAX32 ? MAX32 : s);
      }
      default:
        return this.scoreNew(i, given);
    }
  }

  /**
   * mode: 'upsert' | 'assign' | 'assignValues' | 'assignScores' | 'accum' | 'touch'. `values` is
   * n * dim floats (or undefined for assignScores).
   */
  upsert(
    mode: 'upsert' | 'assign' | 'assignValues' | 'assignScores' | 'accum' | 'touch',
    keys: BigUint64Array,
    values: Float32Array | undefined,
    scores: BigUint64Array | undefined,
    flags?: Uint8Array,
  ): ModelUpsert {
    const n = keys.length;
    const status = new Uint8Array(n);
    const last = new Map<bigint, number>();
    for (let i = 0; i < n; i++) last.set(keys[i] as bigint, i);
    const row = (i: number) => (values as Float32Array).slice(i * this.dim, (i + 1) * this.dim);
    // The update pass.
    const pending: number[] = [];
    for (let i = 0; i < n; i++) {
      const k = keys[i] as bigint;
      if (last.get(k) !== i) {
        status[i] = HkvStatus.duplicate;
        continue;
      }
      const e = this.map.get(k);
      const given = scores?.[i];
      const accumulate = mode === 'accum' && (flags?.[i] ?? 0) !== 0;
      if (!e) {
        if (mode === 'upsert' || mode === 'touch' || (mode === 'accum' && !accumulate)) pending.push(i);
        else status[i] = mode === 'accum' ? HkvStatus.ignored : HkvStatus.missing;
        continue;
      }
      if (mode === 'accum' && !accumulate) {
        status[i] = HkvStatus.ignored;
        continue;
      }
      if (mode === 'upsert' || mode === 'assign' || mode === 'assignValues') e.value = row(i);
      if (mode === 'accum') {
        const add = row(i);
        e.value = e.value.map((x, j) => Math.fround(x + (add[j] as number)));
      }
      if (mode !== 'assignValues') e.score = this.scoreHit(e.score, i, given);
      status[i] = mode === 'touch' ? HkvStatus.found : HkvStatus.updated;
    }
    // The insert pass, bucket by bucket.
    const evicted = new Map<bigint, Entry>();
    let uncertain = false;
    const byBucket = new Map<number, number[]>();
    for (const i of pending) {
      const b = this.bucket(keys[i] as bigint);
      let list = byBucket.get(b);
      if (!list) byBucket.set(b, (list = []));
      list.push(i);
    }
    for (const [b, list] of byBucket) {
      const residents = [...this.map.entries()].filter(([k]) => this.bucket(k) === b);
      const free = 128 - residents.length;
      const overflow = list.length - free;
      const fresh = list.map((i) => ({ i, score: this.scoreNew(i, scores?.[i]) }));
      if (overflow <= 0) {
        for (const { i, score } of fresh) {
          this.map.set(keys[i] as bigint, { value: row(i), score });
          status[i] = HkvStatus.inserted;
        }
        continue;
      }
      residents.sort((x, y) => (x[1].score < y[1].score ? -1 : x[1].score > y[1].score ? 1 : 0));
      let minFresh = MAX64;
      for (const f of fresh) if (f.score < minFresh) minFresh = f.score;
      const victims = residents.slice(0, overflow);
      const maxVictim = victims.at(-1)?.[1].score ?? 0n;
      const nextResident = residents[overflow]?.[1].score;
      // Exact when every fresh key outscores every victim, ties among residents do not decide, and admission refuses none.
      const exact =
        this.policy !== 'custom' &&
        overflow <= residents.length &&
        minFresh > maxVictim &&
        (nextResident === undefined || nextResident > maxVictim);
      if (!exact) uncertain = true;
      for (const [k, e] of victims) {
        this.map.delete(k);
        evicted.set(k, e);
      }
      fresh.forEach(({ i, score }, j) => {
        this.map.set(keys[i] as bigint, { value: row(i), score });
        status[i] = j < free ? HkvStatus.inserted : HkvStatus.evicted;
      });
    }
    this.clock += n;
    return { status, evicted, uncertain };
  }

  erase(keys: BigUint64Array): number {
    let erased = 0;
    for (const k of new Set(keys)) if (this.map.delete(k)) erased++;
    return erased;
  }

  /** Entries a predicate takes. */
  matching(p: { keyMask?: bigint; keyValue?: bigint; scoreMin?: bigint; scoreMax?: bigint }): bigint[] {
    const mask = p.keyMask ?? 0n;
    const want = (p.keyValue ?? 0n) & mask;
    const lo = p.scoreMin ?? 0n;
    const hi = p.scoreMax ?? MAX64;
    return [...this.map.entries()].filter(([k, e]) => (k & mask) === want && e.score >= lo && e.score <= hi).map(([k]) => k);
  }

  clear(): void {
    this.map.clear();
  }
}
