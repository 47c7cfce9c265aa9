import { DeviceArray, describeValue, type Gpu, InvalidArgumentError, u64FromWords, u64Words } from '@gpuhash/core';
import { type LocalFactory, type RemoteFactory, ShardGroup, type ShardHosts } from './group';
import { SHARD_SEED } from './hash';
import type { ShardLink } from './link';
import { HostPartition, mergeIndices } from './partition';
import { ReservedKeys } from './reserved';
import type { ShardedOptions } from './table';

/** What an HKV cache's insert-like calls return (`@gpuhash/hkv`'s UpsertResult), merged over shards. */
export interface ShardedUpsertResult {
  inserted: number;
  updated: number;
  evicted: number;
  /** Batch indices that admission control refused. */
  refused: Uint32Array;
  /** One HkvStatus per key, in batch order. */
  status: Uint8Array;
}

/** insertAndEvict's result: every shard's evicted entries, shard after shard. */
export interface ShardedEvictResult extends ShardedUpsertResult {
  evictedKeys: BigUint64Array;
  evictedValues: Float32Array;
  evictedScores: BigUint64Array;
}

/** findOrInsert's result. */
export interface ShardedFindOrInsertResult extends ShardedUpsertResult {
  values: Float32Array;
  found: Uint8Array;
}

/** find's result (`n * dim` floats, found flags, scores when asked for). */
export interface ShardedCacheFindResult {
  values: Float32Array;
  found: Uint8Array;
  scores?: BigUint64Array;
}

/** The part of `@gpuhash/hkv`'s HkvCache a sharded cache drives (structural: no dependency on the package). */
export interface CacheShard {
  readonly dim: number;
  readonly capacity: number;
  insertOrAssign(keys: Uint32Array, values: Float32Array, scores?: BigUint64Array): Promise<ShardedUpsertResult>;
  insertAndEvict(keys: Uint32Array, values: Float32Array, scores?: BigUint64Array): Promise<ShardedEvictResult>;
  findOrInsert(keys: Uint32Array, values: Float32Array, scores?: BigUint64Array): Promise<ShardedFindOrInsertResult>;
  assign(keys: Uint32Array, values: Float32Array, scores?: BigUint64Array): Promise<ShardedUpsertResult>;
  accumOrAssign(keys: Uint32Array, values: Float32Array, accumulate: Uint8Array, scores?: BigUint64Array): Promise<ShardedUpsertResult>;
  find(keys: Uint32Array, options?: { withScores?: boolean }): Promise<ShardedCacheFindResult>;
  contains(keys: Uint32Array): Promise<Uint8Array>;
  erase(keys: Uint32Array): Promise<number>;
  eraseIf(predicate: object): Promise<number>;
  size(): Promise<number>;
  clear(): Promise<void>;
  destroy(): void;
}

type CacheKeys = BigUint64Array | Uint32Array;
type UpsertOp = 'insertOrAssign' | 'insertAndEvict' | 'findOrInsert' | 'assign' | 'accumOrAssign';

/**
 * HierarchicalKV caches (`@gpuhash/hkv`) split over several GPUs: each u64 key belongs to one
 * shard (XXH32 of its words, unrelated to HKV's fmix64), each shard is an HkvCache with its own
 * buckets, scores and evictions. The calls an embedding pipeline makes, with the answers in the
 * caller's order: insertOrAssign, insertAndEvict, findOrInsert, assign, accumOrAssign, find,
 * contains, erase, eraseIf, size, clear. Eviction is per shard: a key evicts the lowest-score key
 * of its own bucket on its own shard, as on one cache.
 */
export class ShardedCache {
  readonly dim: number;
  readonly seed: number;
  readonly #group: ShardGroup;
  readonly #reserved: ReservedKeys;

  private constructor(group: ShardGroup, dim: number, seed: number, reserved: ReservedKeys) {
    this.#group = group;
    this.dim = dim;
    this.seed = seed;
    this.#reserved = reserved;
  }

  /**
   * One cache per shard: `factory(gpu, shard)` on each Gpu, or the shard workers' factory by name.
   *
   * @example
   * ```ts
   * import { requestGpus } from '@gpuhash/core';
   * import { HkvCache } from '@gpuhash/hkv';
   * import { ShardedCache } from '@gpuhash/sharded';
   *
   * const gpus = await requestGpus();
   * const cache = await ShardedCache.create(gpus, (gpu) => HkvCache.create(gpu, { capacity: 1 << 20, dim: 16 }));
   * await cache.insertOrAssign(new BigUint64Array([7n]), new Float32Array(16).fill(1));
   * const { values, found } = await cache.find(new BigUint64Array([7n, 8n]));
   * cache.destroy();
   * ```
   */
  static async create(hosts: readonly Gpu[], factory: LocalFactory<object>, options?: ShardedOptions): Promise<ShardedCache>;
  static async create(hosts: ShardHosts, factory: RemoteFactory, options?: ShardedOptions): Promise<ShardedCache>;
  static async create(
    hosts: ShardHosts,
    factory: LocalFactory<object> | RemoteFactory,
    options: ShardedOptions = {},
  ): Promise<ShardedCache> {
    const seed = options.seed ?? SHARD_SEED;
    if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff))
      throw new InvalidArgumentError(`ShardedCache.create: seed must be a u32, got ${String(options.seed)}`);
    const group = await ShardGroup.open('ShardedCache', hosts, factory);
    try {
      const dims = new Set(group.info.map((i) => i.dim));
      const dim = group.info[0]?.dim;
      if (dims.size !== 1 || typeof dim !== 'number')
        throw new InvalidArgumentError(
          `ShardedCache.create: the shards must be caches of one dim, got ${[...dims].map(String).join(', ')}`,
        );
      const reserved = await ReservedKeys.probe(group.links[0] as ShardLink, 2);
      return new ShardedCache(group, dim, seed, reserved);
    } catch (error) {
      group.destroy();
      throw error;
    }
  }

  get shardCount(): number {
    return this.#group.count;
  }

  /** Slots over every shard. */
  get capacity(): number {
    return this.#group.links.reduce((c, l) => c + (l.state.capacity ?? 0), 0);
  }

  get deadShards(): number[] {
    return this.#group.dead;
  }

  get isDestroyed(): boolean {
    return this.#group.isDestroyed;
  }

  /** Shard `s`'s own cache where it lives on a Gpu of this thread. */
  shard(s: number): object | undefined {
    return this.#group.links[s]?.target;
  }

  insertOrAssign(keys: CacheKeys, values: Float32Array, scores?: CacheKeys): Promise<ShardedUpsertResult> {
    return this.upsert('insertOrAssign', keys, values, scores);
  }

  /** insertOrAssign, and the entries each shard evicted (shard after shard). */
  insertAndEvict(keys: CacheKeys, values: Float32Array, scores?: CacheKeys): Promise<ShardedEvictResult> {
    return this.upsert('insertAndEvict', keys, values, scores) as Promise<ShardedEvictResult>;
  }

  findOrInsert(keys: CacheKeys, values: Float32Array, scores?: CacheKeys): Promise<ShardedFindOrInsertResult> {
    return this.upsert('findOrInsert', keys, values, scores) as Promise<ShardedFindOrInsertResult>;
  }

  assign(keys: CacheKeys, values: Float32Array, scores?: CacheKeys): Promise<ShardedUpsertResult> {
    return this.upsert('assign', keys, values, scores);
  }

  accumOrAssign(keys: CacheKeys, values: Float32Array, accumulate: Uint8Array, scores?: CacheKeys): Promise<ShardedUpsertResult> {
    if (!(accumulate instanceof Uint8Array))
      throw new InvalidArgumentError(`ShardedCache.accumOrAssign: accumulate must be a Uint8Array, got ${describeValue(accumulate)}`);
    return this.upsert('accumOrAssign', keys, values, scores, accumulate);
  }

  /** Each key's vector (zeros when absent), found flags, and scores with `withScores`. */
  find(keys: CacheKeys, options: { withScores?: boolean } = {}): Promise<ShardedCacheFindResult> {
    return this.#group.run('find', async () => {
      const { words, part } = this.split('find', keys);
      const shardKeys = part.split(words, 2);
      return this.#group.fan(
        'find',
        part,
        (link, s) => link.call<ShardedCacheFindResult>('find', [shardKeys[s], options]),
        (answers) => ({
          values: part.merge(
            answers.map((a) => a?.values),
            Float32Array,
            this.dim,
          ),
          found: part.merge(
            answers.map((a) => a?.found),
            Uint8Array,
          ),
          ...(options.withScores
            ? {
                scores: part.merge(
                  answers.map((a) => a?.scores),
                  BigUint64Array,
                ),
              }
            : {}),
        }),
      );
    });
  }

  /** 1 where the key is present. */
  contains(keys: CacheKeys): Promise<Uint8Array> {
    return this.#group.run('contains', async () => {
      const { words, part } = this.split('contains', keys);
      const shardKeys = part.split(words, 2);
      return this.#group.fan(
        'contains',
        part,
        (link, s) => link.call<Uint8Array>('contains', [shardKeys[s]]),
        (answers) => part.merge(answers, Uint8Array),
      );
    });
  }

  /** Erases the keys present; returns how many. */
  erase(keys: CacheKeys): Promise<number> {
    return this.#group.run('erase', async () => {
      const { words, part } = this.split('erase', keys);
      const shardKeys = part.split(words, 2);
      return this.#group.fan(
        'erase',
        part,
        (link, s) => link.call<number>('erase', [shardKeys[s]]),
        (answers) => answers.reduce<number>((c, a) => c + (a ?? 0), 0),
      );
    });
  }

  /** Erases every entry of every shard that the predicate takes (HKV's EntryPredicate); returns how many. */
  eraseIf(predicate: object): Promise<number> {
    return this.all<number, number>('eraseIf', [predicate], (answers) => answers.reduce<number>((c, a) => c + (a ?? 0), 0));
  }

  /** Live entries over every shard (read from the GPUs). */
  size(): Promise<number> {
    return this.all<number, number>('size', [], (answers) => answers.reduce<number>((c, a) => c + (a ?? 0), 0));
  }

  clear(): Promise<void> {
    return this.all<void, void>('clear', [], () => undefined);
  }

  /** Destroys every shard's cache once pending operations settle. */
  destroy(): void {
    this.#group.destroy();
  }

  // ---- internals ------------------------------------------------------------------------------

  private all<A, R>(op: string, args: unknown[], merge: (answers: readonly (A | undefined)[]) => R): Promise<R> {
    return this.#group.run(op, () => this.#group.fan(op, undefined, (link) => link.call<A>(op, args), merge));
  }

  private split(op: string, keys: unknown): { words: Uint32Array; part: HostPartition } {
    const where = `ShardedCache.${op}`;
    if (keys instanceof DeviceArray)
      throw new InvalidArgumentError(`${where}: keys must be host arrays (a BigUint64Array or (low, high) pairs)`);
    const words = cacheKeyWords(keys, where);
    this.#reserved.check(where, words);
    return { words, part: new HostPartition(words, 2, this.shardCount, this.seed) };
  }

  private upsert(
    op: UpsertOp,
    keys: CacheKeys,
    values: Float32Array,
    scores?: CacheKeys,
    accumulate?: Uint8Array,
  ): Promise<ShardedUpsertResult> {
    return this.#group.run(op, async () => {
      const where = `ShardedCache.${op}`;
      const { words, part } = this.split(op, keys);
      const n = part.n;
      if (!(values instanceof Float32Array))
        throw new InvalidArgumentError(`${where}: values must be a Float32Array of n * dim floats, got ${describeValue(values)}`);
      if (values.length !== n * this.dim)
        throw new InvalidArgumentError(`${where}: ${n} keys of dim ${this.dim} need ${n * this.dim} floats, got ${values.length}`);
      if (accumulate && accumulate.length !== n)
        throw new InvalidArgumentError(`${where}: accumulate has ${accumulate.length} flags for ${n} keys`);
      const shardKeys = part.split(words, 2);
      const shardValues = part.split(values, this.dim);
      const shardScores = scores === undefined ? undefined : part.split(scoreArray(scores, n, where));
      const shardFlags = accumulate ? part.split(accumulate) : undefined;
      return this.#group.fan(
        op,
        part,
        (link, s) => {
          const args: unknown[] = [shardKeys[s], shardValues[s]];
          if (shardFlags) args.push(shardFlags[s]);
          if (shardScores) args.push(shardScores[s]);
          return link.call<ShardedUpsertResult & Partial<ShardedEvictResult & ShardedFindOrInsertResult>>(op, args);
        },
        (answers) => {
          const base: ShardedUpsertResult = {
            inserted: answers.reduce((c, a) => c + (a?.inserted ?? 0), 0),
            updated: answers.reduce((c, a) => c + (a?.updated ?? 0), 0),
            evicted: answers.reduce((c, a) => c + (a?.evicted ?? 0), 0),
            refused: mergeIndices(answers.map((a, s) => (a ? part.toBatchIndices(s, a.refused) : new Uint32Array(0)))),
            status: part.merge(
              answers.map((a) => a?.status),
              Uint8Array,
            ),
          };
          if (op === 'findOrInsert') {
            return {
              ...base,
              values: part.merge(
                answers.map((a) => a?.values),
                Float32Array,
                this.dim,
              ),
              found: part.merge(
                answers.map((a) => a?.found),
                Uint8Array,
              ),
            };
          }
          if (op === 'insertAndEvict') {
            const got = answers.filter((a) => a !== undefined);
            return {
              ...base,
              evictedKeys: concat(
                got.map((a) => a.evictedKeys ?? new BigUint64Array(0)),
                BigUint64Array,
              ),
              evictedValues: concat(
                got.map((a) => a.evictedValues ?? new Float32Array(0)),
                Float32Array,
              ),
              evictedScores: concat(
                got.map((a) => a.evictedScores ?? new BigUint64Array(0)),
                BigUint64Array,
              ),
            };
          }
          return base;
        },
      );
    });
  }
}

/** u64 keys as (low, high) words: a BigUint64Array read in place, or a Uint32Array of pairs (the split copies them). */
function cacheKeyWords(keys: unknown, where: string): Uint32Array {
  if (keys instanceof BigUint64Array) return u64Words(keys);
  if (keys instanceof Uint32Array) {
    if (keys.length % 2 !== 0)
      throw new InvalidArgumentError(`${where}: u64 keys as a Uint32Array need (low, high) pairs, got ${keys.length} words`);
    return keys;
  }
  throw new InvalidArgumentError(
    `${where}: keys must be a BigUint64Array or a Uint32Array of (low, high) pairs, got ${describeValue(keys)}`,
  );
}

/** Scores as one u64 per key (a BigUint64Array; (low, high) pairs are converted). */
function scoreArray(scores: CacheKeys, n: number, where: string): BigUint64Array {
  if (scores instanceof BigUint64Array) {
    if (scores.length !== n) throw new InvalidArgumentError(`${where}: ${scores.length} scores for ${n} keys`);
    return scores;
  }
  if (scores instanceof Uint32Array && scores.length === 2 * n) return u64FromWords(scores, n);
  throw new InvalidArgumentError(`${where}: scores must be a BigUint64Array (or (low, high) pairs) of one per key`);
}

function concat<T extends BigUint64Array | Float32Array>(parts: readonly T[], C: { new (n: number): T }): T {
  const out = new C(parts.reduce((c, p) => c + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p as never, o);
    o += p.length;
  }
  return out;
}
