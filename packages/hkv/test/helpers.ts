import type { Rng } from '@gpuhash/testing';
import fc from 'fast-check';
import { bucketOf, EMPTY_DIGEST, type HkvCache, HkvStatus, hashByteOf, isReservedKey } from '../src';
import { type CacheModel, type Entry, keyHi, keyLo, type ModelUpsert } from './model';

export function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

const hex = (k: bigint) => `0x${k.toString(16)}`;

/** `n` distinct random u64 keys (none reserved); a few share a low or a high word with another. */
export function keyPool(rng: Rng, n: number): BigUint64Array {
  const seen = new Set<bigint>();
  const out = new BigUint64Array(n);
  for (let i = 0; i < n; ) {
    const lo = i > 2 && i % 7 === 0 ? keyLo(out[i - 1] as bigint) : rng.u32();
    const hi = i > 2 && i % 11 === 0 ? keyHi(out[i - 2] as bigint) : rng.u32();
    if (isReservedKey(lo, hi)) continue;
    const k = (BigInt(hi) << 32n) | BigInt(lo);
    if (seen.has(k)) continue;
    seen.add(k);
    out[i++] = k;
  }
  return out;
}

/** `n` distinct keys of which 60% fall in bucket 0 of `buckets` (so that bucket fills and evicts early). */
export function skewedPool(rng: Rng, n: number, buckets: number): BigUint64Array {
  const candidates = keyPool(rng, n * (buckets + 2));
  const hot = buckets === 1 ? n : Math.floor(n * 0.6);
  const out: bigint[] = [];
  let inHot = 0;
  for (const k of candidates) {
    if (out.length === n) break;
    const b = bucketOf(keyLo(k), keyHi(k), buckets);
    if (b === 0 && inHot < hot) {
      out.push(k);
      inHot++;
    } else if (b !== 0 && out.length - inHot < n - hot) out.push(k);
  }
  return BigUint64Array.from(out);
}

/**
 * `n` distinct keys of which a quarter have the empty slots' digest as their hash byte (their stored
 * digest is the neighbouring byte): inserters must not mistake their slots for free ones.
 */
export function emptyDigestPool(rng: Rng, n: number): BigUint64Array {
  const out: bigint[] = [];
  const clashing = Math.floor(n / 4);
  const seen = new Set<bigint>();
  while (out.length < clashing) {
    const lo = rng.u32();
    const hi = rng.u32();
    const k = (BigInt(hi) << 32n) | BigInt(lo);
    if (isReservedKey(lo, hi) || seen.has(k) || hashByteOf(lo, hi) !== EMPTY_DIGEST) continue;
    seen.add(k);
    out.push(k);
  }
  for (const k of keyPool(rng, n)) {
    if (out.length === n) break;
    if (!seen.has(k)) out.push(k);
  }
  // Shuffled, so that every range of the pool holds both kinds.
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [out[i], out[j]] = [out[j] as bigint, out[i] as bigint];
  }
  return BigUint64Array.from(out);
}

/** A value row that names its key and version: [version, lo & 0xffff, j...]. */
export function rows(keys: BigUint64Array, dim: number, version: number): Float32Array {
  const out = new Float32Array(keys.length * dim);
  for (let i = 0; i < keys.length; i++) {
    for (let j = 0; j < dim; j++) out[i * dim + j] = j === 0 ? version : j === 1 ? keyLo(keys[i] as bigint) & 0xffff : version + j * 0.5;
  }
  return out;
}

export function sameRow(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return false;
  return true;
}

/** Every entry on the GPU, by key; fails on a key stored twice. */
export async function snapshot(cache: HkvCache, what: string): Promise<Map<bigint, Entry>> {
  const all = await cache.exportBatch();
  const map = new Map<bigint, Entry>();
  for (let i = 0; i < all.keys.length; i++) {
    const k = all.keys[i] as bigint;
    expect(!map.has(k), `${what}: key ${hex(k)} is stored twice`);
    map.set(k, { value: all.values.slice(i * cache.dim, (i + 1) * cache.dim), score: all.scores[i] as bigint });
  }
  const size = await cache.size();
  expect(size === map.size, `${what}: size() is ${size} but the export holds ${map.size} entries`);
  expect(size <= cache.capacity, `${what}: size ${size} over capacity ${cache.capacity}`);
  return map;
}

/** The GPU's entries equal the model's (keys, values, and scores unless `scores` is false). */
export async function expectModel(cache: HkvCache, model: CacheModel, what: string, scores = true): Promise<void> {
  const got = await snapshot(cache, what);
  expect(got.size === model.size, `${what}: ${got.size} entries on the GPU, ${model.size} in the model`);
  for (const [k, e] of model.map) {
    const g = got.get(k);
    expect(g !== undefined, `${what}: key ${hex(k)} is missing (model has it, score ${e.score})`);
    expect(sameRow((g as Entry).value, e.value), `${what}: key ${hex(k)} holds [${g?.value}], model [${e.value}]`);
    if (scores) expect(g?.score === e.score, `${what}: key ${hex(k)} has score ${g?.score}, model ${e.score}`);
  }
}

/** Statuses equal the model's, except that inserted and evicted may trade places within a bucket. */
export function expectStatuses(got: Uint8Array, want: ModelUpsert, keys: BigUint64Array, buckets: number, what: string): void {
  const counts = new Map<number, number>();
  for (let i = 0; i < keys.length; i++) {
    const g = got[i] as number;
    const w = want.status[i] as number;
    const placed = (s: number) => s === HkvStatus.inserted || s === HkvStatus.evicted;
    if (placed(g) && placed(w)) {
      const b = bucketOf(keyLo(keys[i] as bigint), keyHi(keys[i] as bigint), buckets);
      counts.set(b, (counts.get(b) ?? 0) + (g === HkvStatus.evicted ? 1 : 0) - (w === HkvStatus.evicted ? 1 : 0));
      continue;
    }
    expect(g === w, `${what}: key ${i} (${hex(keys[i] as bigint)}) has status ${g}, model ${w}`);
  }
  for (const [b, d] of counts) expect(d === 0, `${what}: bucket ${b} reports ${d > 0 ? 'more' : 'fewer'} evicting inserts than the model`);
}

/**
 * The invariants of one insertAndEvict batch whatever the concurrency decided: the entries after it
 * are the entries before, plus the keys it placed, minus the keys it reported evicted (each once,
 * with the value and score it had); every stored value is the last one written for its key; within a
 * bucket no resident outlived an evicted resident of a lower score; a refused key is absent and
 * scored below its bucket's minimum.
 */
export function expectBatchInvariants(
  before: Map<bigint, Entry>,
  after: Map<bigint, Entry>,
  batch: { keys: BigUint64Array; scores?: BigUint64Array; status: Uint8Array },
  evicted: { keys: BigUint64Array; values: Float32Array; scores: BigUint64Array },
  lastValue: Map<bigint, Float32Array>,
  buckets: number,
  dim: number,
  what: string,
  dual = false,
): void {
  const placed = new Set<bigint>();
  const updated = new Set<bigint>();
  batch.status.forEach((s, i) => {
    if (s === HkvStatus.inserted || s === HkvStatus.evicted) placed.add(batch.keys[i] as bigint);
    if (s === HkvStatus.updated) updated.add(batch.keys[i] as bigint);
  });
  const gone = new Set<bigint>();
  for (let e = 0; e < evicted.keys.length; e++) {
    const k = evicted.keys[e] as bigint;
    expect(!gone.has(k), `${what}: ${hex(k)} reported evicted twice (${e} of ${evicted.keys.length} evicted entries)`);
    gone.add(k);
    expect(before.has(k) || placed.has(k), `${what}: evicted ${hex(k)} was neither stored nor inserted`);
    const want = lastValue.get(k);
    const got = evicted.values.slice(e * dim, (e + 1) * dim);
    expect(
      want !== undefined && sameRow(got, want),
      `${what}: evicted ${hex(k)} (${before.has(k) ? 'stored before the batch' : 'placed by this batch'}) came back with [${got}], last written [${want}]`,
    );
    expect(!after.has(k), `${what}: evicted ${hex(k)} is still stored`);
  }
  const expected = new Set<bigint>([...before.keys(), ...placed]);
  for (const k of gone) expected.delete(k);
  expect(expected.size === after.size, `${what}: ${after.size} entries stored, ${expected.size} accounted for (before + placed - evicted)`);
  for (const k of expected) expect(after.has(k), `${what}: ${hex(k)} was lost (neither evicted nor erased)`);
  for (const [k, e] of after) {
    const want = lastValue.get(k);
    expect(
      want !== undefined && sameRow(e.value, want),
      `${what}: ${hex(k)} (${before.has(k) ? 'stored before the batch' : 'placed by this batch'}) holds [${e.value}], last written [${want}]`,
    );
  }
  // Dual-bucket mode: the export does not say which of its two buckets holds a key, so the per-bucket checks below do not apply.
  if (dual) {
    batch.status.forEach((s, i) => {
      if (s === HkvStatus.refused) expect(!after.has(batch.keys[i] as bigint), `${what}: refused key ${i} is stored`);
    });
    return;
  }
  // Eviction takes minimum scores: per bucket, evicted residents score no higher than surviving residents (after the updates).
  const bucketOf64 = (k: bigint) => bucketOf(keyLo(k), keyHi(k), buckets);
  const maxGone = new Map<number, { score: bigint; key: bigint }>();
  for (let e = 0; e < evicted.keys.length; e++) {
    const k = evicted.keys[e] as bigint;
    if (!before.has(k)) continue;
    const b = bucketOf64(k);
    const s = evicted.scores[e] as bigint;
    if (s > (maxGone.get(b)?.score ?? -1n)) maxGone.set(b, { score: s, key: k });
  }
  for (const [k, e] of after) {
    if (!before.has(k) || updated.has(k)) continue;
    const m = maxGone.get(bucketOf64(k));
    expect(
      m === undefined || e.score >= m.score,
      `${what}: ${hex(k)} (score ${e.score}) survived while ${hex(m?.key ?? 0n)} (score ${m?.score}) of its bucket ${bucketOf64(k)} was evicted`,
    );
  }
  // Per bucket, after the batch: entries, and the minimum score of the entries stored before the batch that
  // survived it (keys placed by the batch itself are not compared: a pass decides admission against the
  // slots no key of that pass has written; see the README's concurrency section).
  const buckets2 = new Map<number, { count: number; min: bigint; minKey: bigint }>();
  for (const [r, e] of after) {
    const b = bucketOf64(r);
    let cur = buckets2.get(b);
    if (!cur) buckets2.set(b, (cur = { count: 0, min: -1n, minKey: 0n }));
    cur.count++;
    if (before.has(r) && (cur.min < 0n || e.score < cur.min)) {
      cur.min = e.score;
      cur.minKey = r;
    }
  }
  batch.status.forEach((s, i) => {
    if (s !== HkvStatus.refused) return;
    const k = batch.keys[i] as bigint;
    expect(!after.has(k), `${what}: refused ${hex(k)} is stored`);
    const info = buckets2.get(bucketOf64(k));
    expect(info?.count === 128, `${what}: ${hex(k)} was refused from a bucket that is not full (${info?.count})`);
    expect(
      info !== undefined && (info.min < 0n || (batch.scores?.[i] as bigint) < info.min),
      `${what}: refused ${hex(k)} scores ${batch.scores?.[i]}, not below ${hex(info?.minKey ?? 0n)} (score ${info?.min}), stored before the batch and still in its bucket`,
    );
  });
}

/**
 * Sizes grow with the runner's scale up to this factor (the host-side model and invariant checks
 * are JS work linear in the cache size, run after every batch; beyond it they dominate).
 */
export const MAX_SIZE_SCALE = 16;
export const sizeScale = (scale: number) => Math.min(scale, MAX_SIZE_SCALE);

/** Wall-clock budget of one property (all its runs), whatever the scale. */
const PROPERTY_TIME_MS = 15_000;

/**
 * Runs a fast-check property and, when it fails, throws an Error whose first line is the
 * underlying failure (fast-check 4 keeps it only in `cause`, which runners that print the message
 * lose), then the seed and path to replay it and a summary of the counterexample (the full one can
 * be megabytes). On a real GPU (`scale > 1`) it stops at the first failure: a failure that depends
 * on concurrency does not shrink reliably, and shrinking re-runs the GPU batches for minutes.
 */
export async function checkProperty<T>(
  property: fc.IAsyncProperty<[T]>,
  options: { seed: number; numRuns: number; scale: number; describe?: (value: T) => string },
): Promise<void> {
  const details = await fc.check(property, {
    seed: options.seed,
    numRuns: options.numRuns,
    endOnFailure: options.scale > 1,
    interruptAfterTimeLimit: PROPERTY_TIME_MS,
    markInterruptAsFailure: false,
  });
  if (!details.failed) return;
  const cause = details.errorInstance;
  const first = cause instanceof Error ? cause.message : String(cause);
  const example = details.counterexample?.[0];
  const summary = example === undefined ? 'none' : options.describe ? options.describe(example) : fc.stringify(example).slice(0, 300);
  throw new Error(
    `${first}\n(fast-check: failed after ${details.numRuns} runs, ${details.numShrinks} shrinks; seed ${details.seed}, path "${details.counterexamplePath}"; counterexample: ${summary})`,
    { cause },
  );
}
