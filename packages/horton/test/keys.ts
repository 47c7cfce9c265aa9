import type { Rng } from '@gpuhash/testing';
import { bucketCountFor, primaryBucket, RESERVED_KEYS } from '../src';

/** Distinct non-reserved keys satisfying `pred`, none in `exclude`. */
export function keysWhere(rng: Rng, count: number, pred: (key: number) => boolean, exclude: ReadonlySet<number> = new Set()): Uint32Array {
  const out: number[] = [];
  const seen = new Set<number>(exclude);
  while (out.length < count) {
    const k = rng.u32();
    if (RESERVED_KEYS.includes(k) || seen.has(k) || !pred(k)) continue;
    seen.add(k);
    out.push(k);
  }
  return Uint32Array.from(out);
}

/** Distinct keys whose primary bucket, in a table of `capacity` slots (seed 0), is one of `buckets`. */
export function keysOnBuckets(rng: Rng, capacity: number, buckets: readonly number[], count: number): Uint32Array {
  const mask = bucketCountFor(capacity) - 1;
  const set = new Set(buckets);
  return keysWhere(rng, count, (k) => set.has(primaryBucket(k, mask)));
}
