import { universe as anyUniverse, type Rng } from '@gpuhash/testing';
import { candidateBuckets, RESERVED_KEYS, type SplitPointer } from '../src';

export { pick } from '@gpuhash/testing';

/** A universe of distinct keys that Hive does not reserve. */
export function universe(rng: Rng, n: number): Uint32Array {
  return anyUniverse(rng, n, RESERVED_KEYS);
}

/** Distinct keys both of whose candidate buckets lie in `buckets` (under split pointer p). */
export function keysInBuckets(rng: Rng, p: SplitPointer, buckets: ReadonlySet<number>, count: number): Uint32Array {
  const out: number[] = [];
  const seen = new Set<number>();
  while (out.length < count) {
    const k = rng.u32();
    if (k >= 0xfffffffe || seen.has(k)) continue;
    const [b1, b2] = candidateBuckets(k, p);
    if (!buckets.has(b1) || !buckets.has(b2)) continue;
    seen.add(k);
    out.push(k);
  }
  return Uint32Array.from(out);
}

export function shuffle<T>(rng: Rng, a: T[]): T[] {
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}

/** Distinct keys whose candidate buckets (under p) satisfy `pred` (given the key too), none of them in `exclude`. */
export function keysWhere(
  rng: Rng,
  p: SplitPointer,
  count: number,
  pred: (b1: number, b2: number, key: number) => boolean,
  exclude: ReadonlySet<number> = new Set(),
): Uint32Array {
  const out: number[] = [];
  const seen = new Set<number>(exclude);
  while (out.length < count) {
    const k = rng.u32();
    if (k >= 0xfffffffe || seen.has(k)) continue;
    const [b1, b2] = candidateBuckets(k, p);
    if (!pred(b1, b2, k)) continue;
    seen.add(k);
    out.push(k);
  }
  return Uint32Array.from(out);
}
