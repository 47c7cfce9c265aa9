import {
  type ApplyBatch,
  type ApplyResult,
  checkFindOut,
  checkValues,
  DeviceArray,
  type DeviceFindResult,
  type Dictionary,
  type DictionaryCapability,
  type DictionaryStats,
  type FindOptions,
  type FindResult,
  type Gpu,
  type HostKeys,
  hostKeyWords,
  type InsertResult,
  InvalidArgumentError,
  type KeySpec,
  type KeysInput,
  type KeyType,
  type RetrieveResult,
  ShardError,
  type ValuesInput,
  validateOps,
} from '@gpuhash/core';
import { type DevicePartition, gatherOnDevice, partitionOnDevice, scatterOnDevice } from './device';
import { type LocalFactory, type RemoteFactory, ShardGroup, type ShardHosts } from './group';
import { SHARD_SEED } from './hash';
import type { ShardLink } from './link';
import { HostPartition, mergeIndices } from './partition';
import { ReservedKeys } from './reserved';

/** Options of `ShardedTable.create` and `ShardedCache.create`. */
export interface ShardedOptions {
  /** Seed of the shard hash (XXH32). Default `SHARD_SEED`. */
  seed?: number;
}

/** Per-stage wall times of one device-resident batch (`onTiming`), milliseconds. */
export interface DeviceBatchTiming {
  /** Flag, compaction and gather passes on the batch's GPU, with the counts' readback. */
  partitionMs: number;
  /** From partitioned to every shard answered: the other shards' keys through the host and back, all shards at once. */
  shardsMs: number;
  /** Answers written back in batch order on the batch's GPU. */
  scatterMs: number;
  /** Bytes that crossed to other GPUs and back through the host. */
  crossBytes: number;
}

/** Options of a device-resident batch. */
export interface DeviceBatchOptions {
  /** The Gpu the batch lives on (one of the shards'); results stay there. Default: shard 0's. */
  home?: Gpu;
  /** Receives the batch's stage times. */
  onTiming?: (timing: DeviceBatchTiming) => void;
}

/** Statistics of a sharded table: the totals and each shard's own `stats()`. */
export interface ShardedStats extends DictionaryStats {
  shards: DictionaryStats[];
}

const spec = (type: KeyType): KeySpec => ({ type, wordsPerKey: type === 'u64' ? 2 : 1, firstReserved: undefined, reservedNames: 'no' });

/**
 * A dictionary table split over several GPUs: each key belongs to one shard, chosen by a hash of
 * its own (XXH32, unrelated to the tables' hashes); each shard is a gpuhash table of any design,
 * made by the factory you pass, on a Gpu of this thread or in a worker thread or process.
 * Batches are split by shard, every shard runs its part at once, and the answers come back in
 * the caller's order. The same API as one table (insert, insertOrAssign, find, contains, erase,
 * apply, clear, retrieveAll, stats, size), with each shard's own semantics (duplicate keys of a
 * batch land on the same shard, so they behave as in one table).
 *
 * Host operations run in call order. Device-resident batches (a DeviceArray on one shard's Gpu)
 * are partitioned on that GPU; the other shards' parts cross through the host.
 *
 * A shard that fails (device lost, worker dead) fails the operations that touch it with
 * ShardError (the batch indices routed to it, and what the other shards did); operations that
 * touch only live shards go on.
 */
export class ShardedTable<K extends KeyType = 'u32'> {
  readonly keyType: K;
  readonly seed: number;
  /** What every shard can do (device-side mixed batches excepted). */
  readonly capabilities: ReadonlySet<DictionaryCapability>;
  readonly #group: ShardGroup;
  readonly #reserved: ReservedKeys;
  readonly #spec: KeySpec;

  private constructor(group: ShardGroup, keyType: K, seed: number, reserved: ReservedKeys) {
    this.#group = group;
    this.keyType = keyType;
    this.seed = seed;
    this.#reserved = reserved;
    this.#spec = spec(keyType);
    const caps = group.info.map((i) => i.capabilities);
    this.capabilities = new Set(
      [...(caps[0] ?? [])].filter((c) => c !== 'device-apply' && caps.every((set) => set.has(c))),
    ) as ReadonlySet<DictionaryCapability>;
  }

  /**
   * Makes one table per shard: on each Gpu with `factory(gpu, shard)`, or on each shard worker
   * with the factory its script registered under `factory.factory`.
   *
   * @example
   * ```ts
   * import { requestGpus } from '@gpuhash/core';
   * import { LinearProbeTable } from '@gpuhash/linear-probe';
   * import { ShardedTable } from '@gpuhash/sharded';
   *
   * const gpus = await requestGpus(); // every GPU of the host
   * const table = await ShardedTable.create(gpus, (gpu) => LinearProbeTable.create(gpu, { capacity: 1 << 24 }));
   * await table.insert(new Uint32Array([1, 2, 3]), new Uint32Array([10, 20, 30]));
   * const { values, found } = await table.find(new Uint32Array([2, 4])); // [20, 0], [1, 0]
   * table.destroy();
   * ```
   */
  static async create<K extends KeyType = 'u32'>(
    gpus: readonly Gpu[],
    factory: LocalFactory<Dictionary<K>>,
    options?: ShardedOptions,
  ): Promise<ShardedTable<K>>;
  static async create<K extends KeyType = 'u32'>(
    hosts: ShardHosts,
    factory: RemoteFactory,
    options?: ShardedOptions,
  ): Promise<ShardedTable<K>>;
  static async create<K extends KeyType = 'u32'>(
    hosts: ShardHosts,
    factory: LocalFactory<Dictionary<K>> | RemoteFactory,
    options: ShardedOptions = {},
  ): Promise<ShardedTable<K>> {
    const seed = options.seed ?? SHARD_SEED;
    if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff))
      throw new InvalidArgumentError(`ShardedTable.create: seed must be a u32, got ${String(options.seed)}`);
    const group = await ShardGroup.open('ShardedTable', hosts, factory);
    try {
      const types = new Set(group.info.map((i) => i.keyType));
      const keyType = group.info[0]?.keyType;
      if (types.size !== 1 || (keyType !== 'u32' && keyType !== 'u64'))
        throw new InvalidArgumentError(
          `ShardedTable.create: the shards' tables must share one keyType ('u32' or 'u64'), got ${[...types].join(', ')}`,
        );
      const reserved = await ReservedKeys.probe(group.links[0] as ShardLink, keyType === 'u64' ? 2 : 1);
      return new ShardedTable<K>(group, keyType as K, seed, reserved);
    } catch (error) {
      group.destroy();
      throw error;
    }
  }

  /** How many shards. */
  get shardCount(): number {
    return this.#group.count;
  }

  /** Slots over every shard (as of each shard's last operation). */
  get capacity(): number {
    return this.#group.links.reduce((c, l) => c + (l.state.capacity ?? 0), 0);
  }

  /** Live keys over every shard, as of each shard's last operation (a dead shard's last known size). */
  get size(): number {
    return this.#group.links.reduce((c, l) => c + (l.state.size ?? 0), 0);
  }

  get loadFactor(): number {
    return this.capacity === 0 ? 0 : this.size / this.capacity;
  }

  /** Each shard's size, as of its last operation. */
  get shardSizes(): number[] {
    return this.#group.links.map((l) => l.state.size ?? 0);
  }

  /** Shards known to be gone (device lost, worker dead). */
  get deadShards(): number[] {
    return this.#group.dead;
  }

  get isDestroyed(): boolean {
    return this.#group.isDestroyed;
  }

  /** The shard a key belongs to (u64 keys as bigints). */
  shardOf(key: number | bigint): number {
    return new HostPartition(keyWordsOf(key, this.keyType), this.#spec.wordsPerKey, this.shardCount, this.seed).ids[0] as number;
  }

  /**
   * Shard `s`'s own table, where it lives on a Gpu of this thread (undefined for shard workers):
   * for its device-side API (`encodeFind` with timestamps, say). Operations on it bypass the
   * sharding: keep them to keys of that shard.
   */
  shard(s: number): Dictionary<K> | undefined {
    return this.#group.links[s]?.target as Dictionary<K> | undefined;
  }

  /** Shard `s`'s Gpu, where it is one of this thread's. */
  gpuOf(s: number): Gpu | undefined {
    return this.#group.links[s]?.gpu;
  }

  // ---- host operations -----------------------------------------------------------------------

  /** Inserts pairs; a key already present keeps its value. `failed` holds batch indices. */
  insert(keys: KeysInput<K>, values: ValuesInput, options?: DeviceBatchOptions): Promise<InsertResult> {
    return this.runInsert('insert', keys, values, options);
  }

  /** Inserts pairs, overwriting the values of keys already present. */
  insertOrAssign(keys: KeysInput<K>, values: ValuesInput, options?: DeviceBatchOptions): Promise<InsertResult> {
    return this.runInsert('insertOrAssign', keys, values, options);
  }

  /** Host keys give host results; device keys (on one shard's Gpu) give device results there. */
  find(keys: HostKeys<K>, options?: FindOptions): Promise<FindResult>;
  find(keys: DeviceArray<'u32'>, options?: DeviceBatchOptions): Promise<DeviceFindResult>;
  find(keys: KeysInput<K>, options: DeviceBatchOptions & FindOptions = {}): Promise<FindResult | DeviceFindResult> {
    return this.#group.run('find', async () => {
      if (keys instanceof DeviceArray) return this.deviceFind(keys, options);
      const words = this.words('find', keys);
      const out = checkFindOut(options.out, words.length / this.#spec.wordsPerKey, 'ShardedTable.find');
      const part = this.partition(words);
      const shardKeys = part.split(words, this.#spec.wordsPerKey);
      return this.#group.fan(
        'find',
        part,
        (link, s) => link.call<FindResult>('find', [shardKeys[s]]),
        (answers) => ({
          values: part.merge(
            answers.map((a) => a?.values),
            Uint32Array,
            1,
            out?.values,
          ),
          found: part.merge(
            answers.map((a) => a?.found),
            Uint8Array,
            1,
            out?.found,
          ),
        }),
      );
    });
  }

  /** 1 for each key present, else 0. */
  async contains(keys: HostKeys<K>): Promise<Uint8Array> {
    return (await this.find(keys)).found;
  }

  /** Erases keys; returns how many were present. */
  erase(keys: KeysInput<K>, options: DeviceBatchOptions = {}): Promise<number> {
    return this.#group.run('erase', async () => {
      if (keys instanceof DeviceArray) return this.deviceErase(keys, options);
      const words = this.words('erase', keys);
      const part = this.partition(words);
      const shardKeys = part.split(words, this.#spec.wordsPerKey);
      return this.#group.fan(
        'erase',
        part,
        (link, s) => link.call<number>('erase', [shardKeys[s]]),
        (answers) => answers.reduce<number>((c, a) => c + (a ?? 0), 0),
      );
    });
  }

  /**
   * A mixed batch from host arrays (every shard's table must have the 'apply' capability): each
   * shard runs its ops as one concurrent batch, with its table's semantics.
   */
  apply(batch: ApplyBatch<K>): Promise<ApplyResult> {
    return this.#group.run('apply', async () => {
      const where = 'ShardedTable.apply';
      if (batch === null || typeof batch !== 'object') throw new InvalidArgumentError(`${where}: batch must be { ops, keys, values? }`);
      if (batch.keys instanceof DeviceArray)
        throw new InvalidArgumentError(`${where}: mixed batches from device arrays are not sharded; pass host arrays`);
      if (!this.capabilities.has('apply')) throw new InvalidArgumentError(`${where}: the shards' tables do not run mixed batches`);
      const words = this.words('apply', batch.keys);
      const n = words.length / this.#spec.wordsPerKey;
      const { words: ops } = validateOps(where, batch.ops, n);
      if (batch.values !== undefined) checkValues(batch.values, n, where);
      const part = this.partition(words);
      const shardKeys = part.split(words, this.#spec.wordsPerKey);
      const shardOps = part.split(ops);
      const shardValues = part.split(batch.values ?? new Uint32Array(n));
      return this.#group.fan(
        'apply',
        part,
        (link, s) => link.call<ApplyResult>('apply', [{ ops: shardOps[s], keys: shardKeys[s], values: shardValues[s] }]),
        (answers) => ({
          values: part.merge(
            answers.map((a) => a?.values),
            Uint32Array,
          ),
          status: part.merge(
            answers.map((a) => a?.status),
            Uint8Array,
          ),
          failed: mergeIndices(answers.map((a, s) => (a ? part.toBatchIndices(s, a.failed) : new Uint32Array(0)))),
        }),
      );
    });
  }

  /** Removes every key of every shard. */
  clear(): Promise<void> {
    return this.#group.run('clear', () =>
      this.#group.fan(
        'clear',
        undefined,
        (link) => link.call<void>('clear', []),
        () => undefined,
      ),
    );
  }

  /** Every live pair of every shard, shard after shard. */
  retrieveAll(): Promise<RetrieveResult<K>> {
    return this.#group.run('retrieveAll', () =>
      this.#group.fan(
        'retrieveAll',
        undefined,
        (link) => link.call<RetrieveResult<K>>('retrieveAll', []),
        (answers) => {
          const parts = answers.filter((a): a is RetrieveResult<K> => a !== undefined);
          const total = parts.reduce((c, p) => c + p.values.length, 0);
          const keys = this.keyType === 'u64' ? new BigUint64Array(total) : new Uint32Array(total);
          const values = new Uint32Array(total);
          let o = 0;
          for (const p of parts) {
            keys.set(p.keys as never, o);
            values.set(p.values, o);
            o += p.values.length;
          }
          return { keys: keys as RetrieveResult<K>['keys'], values };
        },
      ),
    );
  }

  /** Totals and every shard's own statistics (read on the GPUs). */
  stats(): Promise<ShardedStats> {
    return this.#group.run('stats', () =>
      this.#group.fan(
        'stats',
        undefined,
        (link) => link.call<DictionaryStats>('stats', []),
        (answers) => {
          const shards = answers.map((a) => a ?? { capacity: 0, size: 0, loadFactor: 0 });
          const capacity = shards.reduce((c, s) => c + s.capacity, 0);
          const size = shards.reduce((c, s) => c + s.size, 0);
          return { capacity, size, loadFactor: capacity === 0 ? 0 : size / capacity, shards };
        },
      ),
    );
  }

  /** Waits for every shard's pending work and reads the sizes back (after device-side encodes on `shard(s)`). */
  sync(): Promise<{ size: number }> {
    return this.#group.run('sync', () =>
      this.#group.fan(
        'sync',
        undefined,
        (link) => link.call<{ size: number }>('sync', []),
        (answers) => ({ size: answers.reduce((c, a) => c + (a?.size ?? 0), 0) }),
      ),
    );
  }

  /** Destroys every shard's table once pending operations settle (the Gpus or workers stay yours). */
  destroy(): void {
    this.#group.destroy();
  }

  // ---- internals ------------------------------------------------------------------------------

  private words(op: string, keys: unknown): Uint32Array {
    const where = `ShardedTable.${op}`;
    const words = hostKeyWords(this.#spec, keys, where);
    this.#reserved.check(where, words);
    return words;
  }

  private partition(words: Uint32Array): HostPartition {
    return new HostPartition(words, this.#spec.wordsPerKey, this.shardCount, this.seed);
  }

  private runInsert(
    op: 'insert' | 'insertOrAssign',
    keys: KeysInput<K>,
    values: ValuesInput,
    options: DeviceBatchOptions = {},
  ): Promise<InsertResult> {
    return this.#group.run(op, async () => {
      const where = `ShardedTable.${op}`;
      if (keys instanceof DeviceArray) {
        if (!(values instanceof DeviceArray))
          throw new InvalidArgumentError(`${where}: device keys take device values (a DeviceArray<'u32'>)`);
        return this.deviceInsert(op, keys, values, options);
      }
      if (values instanceof DeviceArray) throw new InvalidArgumentError(`${where}: host keys take host values (a Uint32Array)`);
      const words = this.words(op, keys);
      const n = words.length / this.#spec.wordsPerKey;
      checkValues(values, n, where);
      const part = this.partition(words);
      const shardKeys = part.split(words, this.#spec.wordsPerKey);
      const shardValues = part.split(values as Uint32Array);
      return this.#group.fan(
        op,
        part,
        (link, s) => link.call<InsertResult>(op, [shardKeys[s], shardValues[s]]),
        (answers) => ({
          inserted: answers.reduce((c, a) => c + (a?.inserted ?? 0), 0),
          failed: mergeIndices(answers.map((a, s) => (a ? part.toBatchIndices(s, a.failed) : new Uint32Array(0)))),
        }),
      );
    });
  }

  // ---- device-resident batches ------------------------------------------------------------------

  /** The shard whose Gpu holds a device batch, and its partition there. */
  private async devicePartition(
    op: string,
    keys: DeviceArray<'u32'>,
    options: DeviceBatchOptions,
  ): Promise<{ home: number; part: DevicePartition }> {
    const where = `ShardedTable.${op}`;
    const links = this.#group.links;
    if (links.some((l) => !l.gpu))
      throw new InvalidArgumentError(
        `${where}: device-resident batches need shards on this thread's Gpus (ShardedTable.create(gpus, ...)), not shard workers`,
      );
    const home = options.home ? links.findIndex((l) => l.gpu === options.home) : 0;
    if (home < 0) throw new InvalidArgumentError(`${where}: options.home is not one of the shards' Gpus`);
    if (keys.type !== 'u32' || keys.length % this.#spec.wordsPerKey !== 0)
      throw new InvalidArgumentError(`${where}: device keys must be a DeviceArray<'u32'> of whole keys`);
    const homeLink = links[home] as ShardLink;
    if (homeLink.failure !== undefined) throw new ShardError(where, [home], new Uint32Array(0), homeLink.failure, { dead: true });
    const gpu = homeLink.gpu as Gpu;
    const part = await partitionOnDevice(gpu, keys, this.#spec.wordsPerKey, this.shardCount, this.seed);
    return { home, part };
  }

  /**
   * Runs a device batch: partitions it on its GPU, gives each shard its part (the home shard's
   * stays on the device; the others' cross through the host), then `finish` merges.
   */
  private async deviceFan<R, P>(
    op: string,
    keys: DeviceArray<'u32'>,
    options: DeviceBatchOptions,
    onShard: (ctx: {
      s: number;
      home: number;
      gpu: Gpu;
      part: DevicePartition;
      link: ShardLink;
      cross: (bytes: number) => void;
    }) => Promise<R>,
    merge: (answers: readonly (R | undefined)[], part: DevicePartition, gpu: Gpu) => Promise<P> | P,
  ): Promise<P> {
    const t0 = performance.now();
    const { home, part } = await this.devicePartition(op, keys, options);
    const gpu = (this.#group.links[home] as ShardLink).gpu as Gpu;
    let crossBytes = 0;
    try {
      const t1 = performance.now();
      const touched = part.counts.flatMap((c, s) => (c > 0 ? [s] : []));
      const answers: (R | undefined)[] = new Array(this.shardCount).fill(undefined);
      const failures: Array<{ s: number; error: unknown }> = [];
      await Promise.all(
        touched.map(async (s) => {
          try {
            answers[s] = await onShard({ s, home, gpu, part, link: this.#group.links[s] as ShardLink, cross: (b) => (crossBytes += b) });
          } catch (error) {
            failures.push({ s, error });
          }
        }),
      );
      if (failures.length > 0) {
        failures.sort((a, b) => a.s - b.s);
        const shards = failures.map((f) => f.s);
        let indices: Uint32Array = new Uint32Array(0);
        try {
          indices = mergeIndices(await Promise.all(shards.map((s) => gpu.download(part.indices[s] as DeviceArray<'u32'>))));
        } catch {}
        throw new ShardError(`ShardedTable.${op}`, shards, indices, (failures[0] as { error: unknown }).error, {
          dead: failures.some((f) => (this.#group.links[f.s] as ShardLink).isFatal(f.error)),
        });
      }
      const t2 = performance.now();
      const result = await merge(answers, part, gpu);
      await gpu.finish();
      options.onTiming?.({ partitionMs: t1 - t0, shardsMs: t2 - t1, scatterMs: performance.now() - t2, crossBytes });
      return result;
    } finally {
      part.destroy();
    }
  }

  private deviceFind(keys: DeviceArray<'u32'>, options: DeviceBatchOptions): Promise<DeviceFindResult> {
    return this.deviceFan(
      'find',
      keys,
      options,
      async ({ s, home, gpu, part, link, cross }) => {
        const shardKeys = part.keys[s] as DeviceArray<'u32'>;
        if (s === home) return link.call<DeviceFindResult>('find', [shardKeys]);
        const hostKeys = await gpu.download(shardKeys);
        const r = await link.call<FindResult>('find', [hostKeys]);
        cross(hostKeys.byteLength * 2 + r.values.byteLength + r.found.length * 4);
        return { values: gpu.upload(r.values, 'sharded.find.values'), found: gpu.upload(Uint32Array.from(r.found), 'sharded.find.found') };
      },
      async (answers, part, gpu) => {
        const values = gpu.createArray('u32', part.n, 'ShardedTable.find.values');
        const found = gpu.createArray('u32', part.n, 'ShardedTable.find.found');
        await scatterOnDevice(
          gpu,
          part,
          answers.map((a) => a?.values),
          values,
        );
        await scatterOnDevice(
          gpu,
          part,
          answers.map((a) => a?.found),
          found,
        );
        for (const a of answers) {
          a?.values.destroy();
          a?.found.destroy();
        }
        return { values, found };
      },
    );
  }

  private deviceInsert(
    op: 'insert' | 'insertOrAssign',
    keys: DeviceArray<'u32'>,
    values: DeviceArray<'u32'>,
    options: DeviceBatchOptions,
  ): Promise<InsertResult> {
    checkValues(values, keys.length / this.#spec.wordsPerKey, `ShardedTable.${op}`);
    return this.deviceFan(
      op,
      keys,
      options,
      async ({ s, home, gpu, part, link, cross }) => {
        const c = part.counts[s] as number;
        const shardKeys = part.keys[s] as DeviceArray<'u32'>;
        const index = part.indices[s] as DeviceArray<'u32'>;
        const shardValues = await gatherOnDevice(gpu, index, values, c, 'sharded.values');
        try {
          let r: InsertResult;
          if (s === home) r = await link.call<InsertResult>(op, [shardKeys, shardValues]);
          else {
            const hostKeys = await gpu.download(shardKeys);
            const hostValues = await gpu.download(shardValues);
            cross(hostKeys.byteLength + hostValues.byteLength);
            r = await link.call<InsertResult>(op, [hostKeys, hostValues]);
          }
          if (r.failed.length === 0) return r;
          const batch = await gpu.download(index);
          return { inserted: r.inserted, failed: Uint32Array.from(r.failed, (j) => batch[j] as number) };
        } finally {
          shardValues.destroy();
        }
      },
      (answers) => ({
        inserted: answers.reduce((c, a) => c + (a?.inserted ?? 0), 0),
        failed: mergeIndices(answers.map((a) => a?.failed ?? new Uint32Array(0))),
      }),
    );
  }

  private deviceErase(keys: DeviceArray<'u32'>, options: DeviceBatchOptions): Promise<number> {
    return this.deviceFan(
      'erase',
      keys,
      options,
      async ({ s, home, gpu, part, link, cross }) => {
        const shardKeys = part.keys[s] as DeviceArray<'u32'>;
        if (s === home) return link.call<number>('erase', [shardKeys]);
        const hostKeys = await gpu.download(shardKeys);
        cross(hostKeys.byteLength);
        return link.call<number>('erase', [hostKeys]);
      },
      (answers) => answers.reduce<number>((c, a) => c + (a ?? 0), 0),
    );
  }
}

/** One key as the words a partition reads. */
function keyWordsOf(key: number | bigint, type: KeyType): Uint32Array {
  if (type === 'u64') {
    const k = BigInt(key);
    return new Uint32Array([Number(k & 0xffffffffn), Number((k >> 32n) & 0xffffffffn)]);
  }
  return new Uint32Array([Number(key) >>> 0]);
}
