import {
  allocateEngine,
  type DictionaryCapability,
  DictionaryTable,
  type Gpu,
  hostKeyWords,
  InvalidArgumentError,
  oneOf,
  resolveDictionaryOptions,
} from '@gpuhash/core';
import { HortonEngine } from './engine';
import { REMAP_KEY } from './sentinels';
import type { HortonMode, HortonOptions, HortonStats, LookupCost } from './types';

/** Random keys the miss measurement of `stats()` looks up. */
const MISS_SAMPLE = 1 << 14;

/**
 * Horton tables (Breslow, Zhang, Greathouse, Jayasena and Tullsen, USENIX ATC 2016) on WebGPU: a
 * bucketized cuckoo hash table of 8-slot buckets whose overflowing buckets turn Type B, keeping a
 * remap entry array in their last slot, so a lookup reads one bucket in the common case and never
 * more than two. u32 keys, u32 values. Lookups, inserts and erases all run on the GPU; `mode:
 * 'bcht'` gives the paper's baseline in the same package. The dictionary contract (input checks,
 * results, errors, ordering) is core's DictionaryTable.
 */
export class HortonTable extends DictionaryTable<'u32', HortonEngine> {
  /** The defaults of every option but capacity. */
  static readonly defaults = { mode: 'horton', maxLoadFactor: 0.9, growth: true, bulkInsert: 'auto', repatriate: true } as const;

  readonly capabilities: ReadonlySet<DictionaryCapability> = new Set<DictionaryCapability>(['resize']);

  private constructor(gpu: Gpu, engine: HortonEngine) {
    super(gpu, engine, 'HortonTable');
  }

  /**
   * Creates an empty table of at least `options.capacity` slots.
   *
   * @example
   * ```ts
   * import { requestGpu } from '@gpuhash/core';
   * import { HortonTable } from '@gpuhash/horton';
   *
   * const gpu = await requestGpu();
   * const table = await HortonTable.create(gpu, { capacity: 1 << 20 });
   * await table.insert(new Uint32Array([17, 42]), new Uint32Array([1, 2]));
   * const { values, found } = await table.find(new Uint32Array([42, 5])); // [2, 0], [1, 0]
   * table.destroy();
   * ```
   *
   * @example The paper's baseline, a plain bucketized cuckoo table, for comparison
   * ```ts
   * const baseline = await HortonTable.create(gpu, { capacity: 1 << 20, mode: 'bcht' });
   * ```
   */
  static async create(gpu: Gpu, options: HortonOptions): Promise<HortonTable> {
    const where = 'HortonTable.create';
    const d = HortonTable.defaults;
    const shared = resolveDictionaryOptions(where, options, d, ['mode', 'repatriate']);
    const mode = options.mode ?? d.mode;
    oneOf(where, 'mode', mode, ['horton', 'bcht']);
    const repatriate = options.repatriate ?? d.repatriate;
    oneOf(where, 'repatriate', repatriate, [true, false]);
    const engine = await allocateEngine(
      gpu,
      where,
      () =>
        new HortonEngine(gpu, shared.capacity, {
          mode,
          repatriate,
          maxLoadFactor: shared.maxLoadFactor,
          growth: shared.growth,
          bulkInsert: shared.bulkInsert,
        }),
    );
    return new HortonTable(gpu, engine);
  }

  get mode(): HortonMode {
    return this.engine.settings.mode;
  }

  get maxLoadFactor(): number {
    return this.engine.settings.maxLoadFactor;
  }

  get growth(): boolean {
    return this.engine.settings.growth;
  }

  get bulkInsert(): 'auto' | 'always' | 'never' {
    return this.engine.settings.bulkInsert;
  }

  get repatriate(): boolean {
    return this.engine.settings.repatriate;
  }

  /** Buckets (8 slots each). */
  get buckets(): number {
    return this.engine.bucketCount;
  }

  /** The hash seed of the current layout: 0 until a rebuild for colliding keys draws another. */
  get hashSeed(): number {
    return this.engine.seed;
  }

  /** Type B buckets, as of the last host operation. */
  get typeBBuckets(): number {
    return this.engine.typeB;
  }

  /**
   * Primary keys that left their bucket to make room for a secondary key (the last resort of an
   * insert, a departure from the paper: see the README), since the table was built, cleared or
   * rebuilt; as of the last host operation.
   */
  get primaryPushes(): number {
    return this.engine.pushes;
  }

  /** The buckets buffer (16 u32 words a bucket: 8 slots of key, value), for device-side code. */
  get bucketsBuffer(): GPUBuffer {
    if (this.isDestroyed) throw new InvalidArgumentError('HortonTable.bucketsBuffer: the table was destroyed');
    return this.engine.bucketsBuffer;
  }

  /**
   * Looks the keys up with the counting lookup and returns how many buckets the hits and the
   * misses read (the paper's cost model, measured on the GPU).
   */
  lookupCost(keys: Uint32Array): Promise<LookupCost> {
    return this.runOp('lookupCost', async () => {
      const words = hostKeyWords(this.engine.keySpec, keys, 'HortonTable.lookupCost');
      if (words.length === 0) return { hits: 0, misses: 0, bucketsPerHit: 0, bucketsPerMiss: 0 };
      const buffer = this.temporary(this.gpu.upload(words, 'horton.lookupCost.keys')).buffer;
      const c = await this.engine.countLookups(buffer, words.length);
      return {
        hits: c.hits,
        misses: c.misses,
        bucketsPerHit: c.hits === 0 ? 0 : c.hitBuckets / c.hits,
        bucketsPerMiss: c.misses === 0 ? 0 : c.missBuckets / c.misses,
      };
    });
  }

  /** The raw bucket words (16 per bucket; a Type B bucket has REMAP_KEY at word 14 and its remap entries at 15). */
  bucketWords(): Promise<Uint32Array> {
    return this.runOp('bucketWords', () => this.engine.bucketWords());
  }

  /** Rebuilds the table into `capacity` slots (default: the current capacity), repacking every key. */
  rehash(capacity?: number): Promise<void> {
    return this.runOp('rehash', async () => {
      const target = capacity ?? this.engine.capacity;
      if (!(Number.isSafeInteger(target) && target >= 1))
        throw new InvalidArgumentError(`HortonTable.rehash: capacity must be a positive integer, got ${String(target)}`);
      if (target < this.engine.size)
        throw new InvalidArgumentError(`HortonTable.rehash: ${target} slots cannot hold the table's ${this.engine.size} keys`);
      await this.engine.rebuild(target, false);
    });
  }

  /** Occupancy, Type B share and buckets touched per lookup (hits and misses), all counted on the GPU. */
  stats(): Promise<HortonStats> {
    return this.runOp('stats', async () => {
      const e = this.engine;
      const [live, away, typeB] = await e.occupancy();
      let bucketsPerHit = 0;
      if (live > 0) {
        const keys = this.temporary(this.gpu.createArray('u32', live, 'horton.stats.keys'));
        const values = this.temporary(this.gpu.createArray('u32', live, 'horton.stats.values'));
        const cursor = this.temporary(this.gpu.createArray('u32', 1, 'horton.stats.cursor'));
        const encoder = this.gpu.device.createCommandEncoder();
        e.encodeRetrieve(encoder, keys.buffer, values.buffer, cursor.buffer);
        this.gpu.submit([encoder.finish()]);
        const c = await e.countLookups(keys.buffer, live);
        bucketsPerHit = c.hits === 0 ? 0 : c.hitBuckets / c.hits;
      }
      const sample = new Uint32Array(MISS_SAMPLE);
      let h = 0x2545f491;
      for (let i = 0; i < sample.length; i++) {
        h = (Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x6b43a9b5) >>> 0;
        sample[i] = h >= REMAP_KEY ? 0 : h;
      }
      const probe = this.temporary(this.gpu.upload(sample, 'horton.stats.sample')).buffer;
      const m = await e.countLookups(probe, sample.length);
      return {
        capacity: e.capacity,
        size: live,
        loadFactor: live / e.capacity,
        mode: e.settings.mode,
        buckets: e.bucketCount,
        typeBShare: typeB / e.bucketCount,
        remappedShare: live === 0 ? 0 : away / live,
        bucketsPerHit,
        bucketsPerMiss: m.misses === 0 ? 0 : m.missBuckets / m.misses,
        missSample: m.misses,
        rehashes: e.rehashes,
        primaryPushes: e.pushes,
      };
    });
  }
}
