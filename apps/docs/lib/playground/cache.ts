/// <reference types="vitepress/client" />
import type { Gpu } from '@gpuhash/core';
import { fmix32 } from '@gpuhash/kernels';

/**
 * The cache playground: a Zipf stream through a cache package (kind 'cache' in its package.json's
 * `gpuhash` field: HKV), per batch a find then an insertOrAssign, as the bench's hitrate workload.
 * Every found value is checked against the one its key was stored with, and every batch's counts
 * against the cache's size.
 */

export type CachePolicy = 'lru' | 'lfu' | 'epochLru' | 'epochLfu';
export const CACHE_POLICIES: readonly CachePolicy[] = ['lru', 'lfu', 'epochLru', 'epochLfu'];

/** What the playground uses of a cache: HKV's host API (the counts of an insert batch). */
export interface PlaygroundCache {
  readonly capacity: number;
  epoch: number;
  find(keys: Uint32Array): Promise<{ values: Float32Array; found: Uint8Array }>;
  insertOrAssign(
    keys: Uint32Array,
    values: Float32Array,
  ): Promise<{ inserted: number; updated: number; evicted: number; status: Uint8Array }>;
  size(): Promise<number>;
  destroy(): void;
}

export interface CacheChoice {
  id: string;
  summary: string;
  guide?: string;
  create(gpu: Gpu, options: { capacity: number; dim: number; policy: CachePolicy }): Promise<PlaygroundCache>;
}

interface PackageMeta {
  kind: 'table' | 'cache' | 'toolkit';
  order: number;
  summary: string;
  guide?: string;
  export?: string;
}

const MANIFESTS = import.meta.glob<PackageMeta | undefined>('../../../../packages/*/package.json', { eager: true, import: 'gpuhash' });
const SOURCES = import.meta.glob<Record<string, unknown>>('../../../../packages/*/src/index.ts');

interface CacheClass {
  create(gpu: Gpu, options: { capacity: number; dim: number; policy: CachePolicy }): Promise<PlaygroundCache>;
}

/** The caches of the workspace (packages/* whose `gpuhash.kind` is 'cache'), in order. */
export const CACHES: readonly CacheChoice[] = Object.entries(MANIFESTS)
  .flatMap(([path, meta]) => {
    if (meta?.kind !== 'cache') return [];
    const id = path.split('/').at(-2) ?? '';
    const source = SOURCES[`../../../../packages/${id}/src/index.ts`];
    const choice: CacheChoice = {
      id,
      summary: meta.summary,
      guide: meta.guide,
      async create(gpu, options) {
        if (!source) throw new Error(`@gpuhash/${id}: no src/index.ts`);
        const Cache = (await source())[meta.export ?? ''] as CacheClass | undefined;
        if (typeof Cache?.create !== 'function') throw new Error(`@gpuhash/${id} exports no cache class ${meta.export} with create()`);
        return Cache.create(gpu, options);
      },
    };
    return [{ order: meta.order, choice }];
  })
  .sort((a, b) => a.order - b.order)
  .map((c) => c.choice);

/** Floats per value: two words of the key, exact in f32 (24 bits each), so each lookup is checked. */
export const CACHE_DIM = 2;

/** Key of Zipf rank r: (fmix32(2r + 1), fmix32(r) >> 1), the bench's keys: distinct, never reserved. */
export function rankKey(r: number): [number, number] {
  return [fmix32((2 * r + 1) >>> 0), fmix32(r >>> 0) >>> 1];
}

export function storedValue(lo: number, hi: number): [number, number] {
  return [lo & 0xffffff, hi & 0xffffff];
}

/** Zipf(alpha) ranks over [0, universe): inverse CDF by binary search, seeded (xorshift32). */
export function zipfRanks(universe: number, alpha: number, seed: number): () => number {
  const cdf = new Float64Array(universe);
  let sum = 0;
  for (let r = 0; r < universe; r++) {
    sum += 1 / (r + 1) ** alpha;
    cdf[r] = sum;
  }
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    const u = (s / 2 ** 32) * sum;
    let lo = 0;
    let hi = universe - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface CacheRunSpec {
  capacity: number;
  alpha: number;
  policies: readonly CachePolicy[];
  /** Distinct keys of the stream, as a multiple of the capacity (the paper's hit-rate table: 10). */
  universe?: number;
  /** Batches; each holds capacity / 8 keys (default 32: 4x the capacity in all). */
  batches?: number;
  seed?: number;
}

export interface CachePolicyResult {
  policy: CachePolicy;
  lookups: number;
  /** Lookups that found their key, over the whole run. */
  hits: number;
  /** Hits and lookups over the second half of the batches (the cache full: its steady state). */
  steadyHits: number;
  steadyLookups: number;
  inserted: number;
  updated: number;
  evicted: number;
  size: number;
  /** Found values that differ from their key's, plus batches whose counts disagree with the size. */
  mismatches: number;
  ms: number;
}

export interface CacheRunOptions {
  now: () => number;
  onPolicy?: (r: CachePolicyResult) => void;
  signal?: AbortSignal;
}

/** The stream of a run: one key array per batch, shared by every policy. */
export function cacheStream(spec: CacheRunSpec): Uint32Array[] {
  const batch = Math.max(1, Math.floor(spec.capacity / 8));
  const next = zipfRanks(Math.round((spec.universe ?? 10) * spec.capacity), spec.alpha, spec.seed ?? 0x2545f491);
  return Array.from({ length: spec.batches ?? 32 }, () => {
    const words = new Uint32Array(2 * batch);
    for (let i = 0; i < batch; i++) {
      const [lo, hi] = rankKey(next());
      words[2 * i] = lo;
      words[2 * i + 1] = hi;
    }
    return words;
  });
}

/** Runs the stream through one cache per policy (created by `create`, destroyed after). */
export async function runCacheWorkload(
  create: (policy: CachePolicy) => Promise<PlaygroundCache>,
  spec: CacheRunSpec,
  options: CacheRunOptions,
): Promise<CachePolicyResult[]> {
  const stream = cacheStream(spec);
  const results: CachePolicyResult[] = [];
  for (const policy of spec.policies) {
    options.signal?.throwIfAborted();
    const cache = await create(policy);
    try {
      const r: CachePolicyResult = {
        policy,
        lookups: 0,
        hits: 0,
        steadyHits: 0,
        steadyLookups: 0,
        inserted: 0,
        updated: 0,
        evicted: 0,
        size: 0,
        mismatches: 0,
        ms: 0,
      };
      const start = options.now();
      for (let b = 0; b < stream.length; b++) {
        options.signal?.throwIfAborted();
        const keys = stream[b] as Uint32Array;
        const n = keys.length / 2;
        cache.epoch = b;
        const { values, found } = await cache.find(keys);
        let hits = 0;
        for (let i = 0; i < n; i++) {
          if (found[i] !== 1) continue;
          hits++;
          const [v0, v1] = storedValue(keys[2 * i] as number, keys[2 * i + 1] as number);
          if (values[2 * i] !== v0 || values[2 * i + 1] !== v1) r.mismatches++;
        }
        r.hits += hits;
        r.lookups += n;
        if (2 * b >= stream.length) {
          r.steadyHits += hits;
          r.steadyLookups += n;
        }
        const stored = new Float32Array(2 * n);
        for (let i = 0; i < n; i++) {
          const [v0, v1] = storedValue(keys[2 * i] as number, keys[2 * i + 1] as number);
          stored[2 * i] = v0;
          stored[2 * i + 1] = v1;
        }
        const u = await cache.insertOrAssign(keys, stored);
        r.inserted += u.inserted;
        r.updated += u.updated;
        r.evicted += u.evicted;
      }
      r.ms = options.now() - start;
      r.size = await cache.size();
      // Only keys placed in free slots grow the cache (an eviction replaces one key by another).
      if (r.size !== r.inserted || r.size > cache.capacity) r.mismatches++;
      results.push(r);
      options.onPolicy?.(r);
    } finally {
      cache.destroy();
    }
  }
  return results;
}
