import {
  allocateEngine,
  type DictionaryCapability,
  DictionaryTable,
  type Gpu,
  InternalError,
  InvalidArgumentError,
  integerIn,
  oneOf,
  resolveDictionaryOptions,
} from '@gpuhash/core';
import { OP_CHUNK } from './dispatcher';
import { HiveEngine } from './engine';
import { BUCKET_SLOTS, type SplitPointer } from './split-pointer';
import { limitError, maxBuckets, slotsBytes } from './storage';
import type { HiveOptions, HiveStats } from './types';
import { MAX_EVICTIONS } from './wgsl/cuckoo';
import { STATS_WORDS, StatsWord, statsKernel } from './wgsl/inspect';

/**
 * The Hive hash table (Polak, Troendle and Jang, 2025): u32 keys and values in 32-slot buckets with a free mask each,
 * two candidate buckets per key, lock-free claims and update lookups by cooperative groups (WABC,
 * WCME), finds that read a key's 32-byte home sector first, bounded cuckoo eviction under bucket
 * locks, an overflow stash, and linear-hashing resize. The dictionary contract (input checks,
 * results, errors, ordering) is core's DictionaryTable; this class adds what is Hive's own.
 */
export class HiveTable extends DictionaryTable<'u32', HiveEngine> {
  /** The defaults of every option but capacity (`subgroups`: when the device has the feature). */
  static readonly defaults = {
    maxLoadFactor: 0.9,
    minLoadFactor: 0.35,
    growth: true,
    resizeBatch: 4096,
    maxEvictions: 8,
    bulkInsert: 'auto',
  } as const;

  readonly capabilities: ReadonlySet<DictionaryCapability> = new Set<DictionaryCapability>([
    'apply',
    'device-apply',
    'resize',
    'bulk-insert',
  ]);

  private constructor(gpu: Gpu, engine: HiveEngine) {
    super(gpu, engine, 'HiveTable');
  }

  /**
   * Creates an empty table of at least `options.capacity` slots (whole 32-slot buckets).
   *
   * @example
   * ```ts
   * import { Op, requestGpu } from '@gpuhash/core';
   * import { HiveTable } from '@gpuhash/hive';
   *
   * const gpu = await requestGpu();
   * const table = await HiveTable.create(gpu, { capacity: 1 << 20 }); // grows and shrinks by itself
   * await table.insert(new Uint32Array([17, 42]), new Uint32Array([1, 2]));
   * // A mixed batch: inserts, finds and erases run concurrently in one dispatch.
   * const { status } = await table.apply({
   *   ops: new Uint8Array([Op.insert, Op.find, Op.erase]),
   *   keys: new Uint32Array([7, 42, 17]),
   *   values: new Uint32Array([70, 0, 0]),
   * });
   * table.destroy();
   * ```
   */
  static async create(gpu: Gpu, options: HiveOptions): Promise<HiveTable> {
    const where = 'HiveTable.create';
    const d = HiveTable.defaults;
    const shared = resolveDictionaryOptions(where, options, d, [
      'minLoadFactor',
      'resizeBatch',
      'maxEvictions',
      'subgroups',
      'opChunk',
      'windowBuckets',
      'bulkPartKeys',
      'windowOrder',
    ]);
    const minLoadFactor = options.minLoadFactor ?? d.minLoadFactor;
    if (!(typeof minLoadFactor === 'number' && minLoadFactor >= 0 && minLoadFactor < shared.maxLoadFactor))
      throw new InvalidArgumentError(
        `${where}: minLoadFactor must be in [0, maxLoadFactor), got ${String(minLoadFactor)} with maxLoadFactor ${shared.maxLoadFactor}`,
      );
    const resizeBatch = options.resizeBatch ?? d.resizeBatch;
    integerIn(where, 'resizeBatch', resizeBatch, 1, 2 ** 31);
    const maxEvictions = options.maxEvictions ?? d.maxEvictions;
    integerIn(where, 'maxEvictions', maxEvictions, 1, MAX_EVICTIONS);
    const opChunk = options.opChunk ?? OP_CHUNK;
    integerIn(where, 'opChunk', opChunk, 1, 2 ** 31);
    const subgroups = options.subgroups ?? gpu.subgroups.supported;
    oneOf(where, 'subgroups', subgroups, [true, false]);
    if (subgroups && !gpu.subgroups.supported)
      throw new InvalidArgumentError(`${where}: subgroups: true, but this device was created without the 'subgroups' feature`);
    const { windowBuckets } = options;
    if (
      windowBuckets !== undefined &&
      (!Number.isInteger(windowBuckets) || windowBuckets < 1 || (windowBuckets & (windowBuckets - 1)) !== 0)
    )
      throw new InvalidArgumentError(`${where}: windowBuckets must be a power of two, got ${String(windowBuckets)}`);
    const { bulkPartKeys } = options;
    if (bulkPartKeys !== undefined && (!Number.isInteger(bulkPartKeys) || bulkPartKeys < 64 || bulkPartKeys % 64 !== 0))
      throw new InvalidArgumentError(`${where}: bulkPartKeys must be a positive multiple of 64, got ${String(bulkPartKeys)}`);
    const buckets = Math.max(1, Math.ceil(shared.capacity / BUCKET_SLOTS));
    if (buckets > maxBuckets(gpu, windowBuckets)) throw limitError(gpu, buckets, windowBuckets);
    const settings = {
      ...shared,
      minLoadFactor,
      resizeBatch,
      maxEvictions,
      opChunk,
      subgroups,
      windowBuckets,
      bulkPartKeys,
      windowOrder: options.windowOrder,
    };
    return new HiveTable(gpu, await allocateEngine(gpu, where, () => new HiveEngine(gpu, buckets, settings)));
  }

  get maxLoadFactor(): number {
    return this.engine.settings.maxLoadFactor;
  }

  get minLoadFactor(): number {
    return this.engine.settings.minLoadFactor;
  }

  get growth(): boolean {
    return this.engine.settings.growth;
  }

  get resizeBatch(): number {
    return this.engine.settings.resizeBatch;
  }

  get maxEvictions(): number {
    return this.engine.settings.maxEvictions;
  }

  /** Whether the cooperative groups are subgroups (else groups of one invocation). */
  get subgroups(): boolean {
    return this.engine.settings.subgroups;
  }

  /** Which insert batches take the bulk build (see HiveOptions.bulkInsert). */
  get bulkInsert(): 'auto' | 'always' | 'never' {
    return this.engine.settings.bulkInsert;
  }

  get buckets(): number {
    return this.engine.d.buckets;
  }

  /** The linear-hashing state: round size and split pointer. */
  get splitPointer(): SplitPointer {
    return this.engine.d.splitPointer;
  }

  /** Keys in the overflow stash, as of the last host operation. */
  get stashSize(): number {
    return this.engine.stashSize;
  }

  /** Slots of the overflow stash (1/64 of the allocated buckets, at least one 32-slot line). */
  get stashCapacity(): number {
    return this.engine.storage.stashLines * BUCKET_SLOTS;
  }

  /**
   * Makes room for `n` keys under the upper load threshold (splits buckets now), and keeps that
   * capacity through later automatic contraction. Throws LimitExceededError past the device's limit (maxBuckets).
   */
  reserve(n: number): Promise<void> {
    return this.runOp('reserve', async () => {
      integerIn('HiveTable.reserve', 'n', n, 0, Number.MAX_SAFE_INTEGER);
      const target = Math.max(1, Math.ceil(n / (this.maxLoadFactor * BUCKET_SLOTS)));
      const storage = this.engine.storage;
      if (target > storage.maxBuckets) throw limitError(this.gpu, target, storage.windowBuckets);
      const resizer = this.engine.resizer;
      await resizer.expandTo(target);
      resizer.floor = Math.max(resizer.floor, target);
    });
  }

  /**
   * Contracts the table (merging buckets) to the fewest that hold its keys under the upper load
   * threshold, as far as merges succeed, then releases the memory the buckets no longer need
   * (when the stash is empty). Later automatic contraction may go down to this capacity.
   */
  shrinkToFit(): Promise<void> {
    return this.runOp('shrinkToFit', async () => {
      const resizer = this.engine.resizer;
      await resizer.contractTo(Math.max(1, Math.ceil(this.engine.size / (this.maxLoadFactor * BUCKET_SLOTS))));
      resizer.floor = this.engine.d.buckets;
      await resizer.fit();
    });
  }

  /** Occupancy counted on the GPU, with the stash, eviction, lock and resize counters. */
  stats(): Promise<HiveStats> {
    return this.runOp('stats', async () => {
      const e = this.engine;
      await e.refresh();
      const out = this.temporary(this.gpu.createArray('u32', STATS_WORDS, 'hive.stats'));
      const jobs = e.d.buckets + e.storage.stashLines;
      const encoder = this.gpu.device.createCommandEncoder();
      const buffers = { slots_ro: e.storage.slots, masks_ro: e.storage.meta, out: out.buffer };
      e.d.dispatch(encoder, statsKernel.variant(e.storage.windowing), jobs, buffers, { n: jobs, aux0: e.d.buckets });
      this.gpu.submit([encoder.finish()]);
      const words = await this.gpu.download(out);
      const w = (i: number) => words[i] as number;
      if (w(StatsWord.inconsistent) !== 0 || w(StatsWord.locksHeld) !== 0) {
        throw new InternalError(
          `HiveTable.stats: ${w(StatsWord.inconsistent)} slots disagree with their free masks and ${w(StatsWord.locksHeld)} bucket locks are held between batches`,
        );
      }
      const size = w(StatsWord.tableKeys) + w(StatsWord.stashKeys);
      const p = this.splitPointer;
      return {
        capacity: this.capacity,
        size,
        loadFactor: size / this.capacity,
        buckets: e.d.buckets,
        allocatedBuckets: e.storage.nalloc,
        roundBuckets: p.n0,
        splitPointer: p.split,
        fullBuckets: w(StatsWord.fullBuckets),
        stashSize: w(StatsWord.stashKeys),
        stashCapacity: this.stashCapacity,
        stashLoad: w(StatsWord.stashKeys) / this.stashCapacity,
        ...e.totals,
        ...e.resizer.counts,
      };
    });
  }

  /** @internal Profiling hook and pass tiles for tools/gpu-check's perf-hive. */
  get dispatcher(): HiveEngine['d'] {
    return this.engine.d;
  }

  /** @internal The raw buffers (the slots' windows joined, and how many there are), for invariant checks in tests. */
  debugSnapshot(): Promise<{
    slots: Uint32Array;
    meta: Uint32Array;
    buckets: number;
    nalloc: number;
    stashLines: number;
    windows: number;
  }> {
    return this.runOp('debugSnapshot', async () => {
      const s = this.engine.storage;
      const slots = await s.readSlots(slotsBytes(s.nalloc));
      const meta = new Uint32Array(await this.gpu.readBytes(s.meta, 0, s.metaWords(s.nalloc) * 4));
      return { slots, meta, buckets: this.engine.d.buckets, nalloc: s.nalloc, stashLines: s.stashLines, windows: s.windowing.windows };
    });
  }
}
