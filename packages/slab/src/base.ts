import {
  allocateEngine,
  type DictionaryCapability,
  DictionaryTable,
  type Gpu,
  InvalidArgumentError,
  integerIn,
  oneOf,
  resolveDictionaryOptions,
} from '@gpuhash/core';
import { SlabEngine } from './engine';
import { bucketsFor, entriesPerSlab, expectedPoolSlabs, SLAB_BYTES, type SlabMode } from './geometry';
import type { PoolGeometry } from './pool';
import type { SlabOptions, SlabStats } from './types';

/** The defaults of every slab table option but capacity. */
export const SLAB_DEFAULTS = {
  maxLoadFactor: 0.8,
  growth: true,
  bulkInsert: 'auto',
  targetChainLength: 0.7,
  tile: 4,
  seed: 0x5eed,
} as const;

const OWN_OPTIONS = ['buckets', 'targetChainLength', 'poolSlabs', 'subgroups', 'tile', 'seed'];

/** Checks a slab table's options and builds its engine, cleared. */
export async function createSlabEngine(gpu: Gpu, where: string, options: SlabOptions, mode: SlabMode): Promise<SlabEngine> {
  const d = SLAB_DEFAULTS;
  const shared = resolveDictionaryOptions(where, options, d, OWN_OPTIONS);
  const target = options.targetChainLength ?? d.targetChainLength;
  if (!(typeof target === 'number' && target > 0 && target <= 64))
    throw new InvalidArgumentError(`${where}: targetChainLength must be a number in (0, 64], got ${String(target)}`);
  const buckets = options.buckets ?? bucketsFor(shared.capacity, mode, target);
  integerIn(where, 'buckets', buckets, 1, 2 ** 27);
  const tile = options.tile ?? d.tile;
  oneOf(where, 'tile', tile, [1, 2, 4, 8, 16]);
  const seed = options.seed ?? d.seed;
  integerIn(where, 'seed', seed, 0, 0xffffffff);
  const subgroups = options.subgroups ?? gpu.subgroups.supported;
  oneOf(where, 'subgroups', subgroups, [true, false]);
  if (subgroups && !gpu.subgroups.supported)
    throw new InvalidArgumentError(`${where}: subgroups: true, but this device was created without the 'subgroups' feature`);
  // The first pool: what `capacity` keys are expected to need beyond the base slabs, under the fill bound.
  const pool = options.poolSlabs ?? Math.ceil(expectedPoolSlabs(shared.capacity, buckets, entriesPerSlab(mode)) / shared.maxLoadFactor);
  integerIn(where, 'poolSlabs', pool, 1, 2 ** 27);
  gpu.checkBufferSize((buckets + pool) * SLAB_BYTES, `${where}: the slab array (${buckets} buckets)`);
  // Groups never span more than the smallest subgroup the device may run (the kernels take the
  // group size as a constant); without subgroups each invocation is its own group.
  const lanes = subgroups ? Math.max(1, Math.min(tile, gpu.subgroups.minSize)) : 1;
  const settings = { mode, growth: shared.growth, maxLoadFactor: shared.maxLoadFactor, tile: lanes, subgroups, seed };
  return allocateEngine(gpu, where, () => new SlabEngine(gpu, buckets, pool, settings));
}

/**
 * What the three slab tables share beyond the dictionary contract: the bucket count and its
 * change (`rehash`), `flush`, the statistics, and the allocator's own passes.
 */
export abstract class SlabTableBase extends DictionaryTable<'u32', SlabEngine> {
  readonly capabilities: ReadonlySet<DictionaryCapability> = new Set<DictionaryCapability>(['apply', 'device-apply', 'resize']);

  protected constructor(
    gpu: Gpu,
    engine: SlabEngine,
    private readonly owner: string,
  ) {
    super(gpu, engine, owner);
  }

  /** 'map', 'multimap' or 'set'. */
  get mode(): SlabMode {
    return this.engine.settings.mode;
  }

  /** Buckets: base slabs, one per chain. */
  get buckets(): number {
    return this.engine.buckets;
  }

  /** Entries a slab holds: 15 pairs, or 31 keys in a set. */
  get entriesPerSlab(): number {
    return this.engine.perSlab;
  }

  get growth(): boolean {
    return this.engine.settings.growth;
  }

  /** The share of the pool that growth keeps in use. */
  get maxLoadFactor(): number {
    return this.engine.settings.maxLoadFactor;
  }

  /** Whether cooperative groups are subgroup tiles. */
  get subgroups(): boolean {
    return this.engine.settings.subgroups;
  }

  /** Lanes per cooperative group in force (the tile option, capped at the device's smallest subgroup; 1 without subgroups). */
  get tile(): number {
    return this.engine.settings.tile;
  }

  /** Erased slots still taking room (map and set mode), as of the last host operation. */
  get tombstones(): number {
    return this.engine.tombstones;
  }

  /** The slab array (base slabs, then the pool; 32 u32 words a slab), for device-side code. */
  get slabsBuffer(): GPUBuffer {
    if (this.isDestroyed) throw new InvalidArgumentError(`${this.owner}.slabsBuffer: the table was destroyed`);
    return this.engine.pool.slabs;
  }

  /** SlabAlloc's bitmaps: a bit per pool slab, set while the slab is allocated. */
  get bitmapBuffer(): GPUBuffer {
    if (this.isDestroyed) throw new InvalidArgumentError(`${this.owner}.bitmapBuffer: the table was destroyed`);
    return this.engine.pool.bitmap;
  }

  /** The pool's geometry: super blocks, memory blocks per super block, bitmap words per block, slabs. */
  get poolGeometry(): PoolGeometry {
    return { ...this.engine.pool.geometry };
  }

  /** The universal hash's coefficients: bucket(k) = ((a·k + b) mod (2^32 - 5)) mod buckets. */
  get hashParams(): { a: number; b: number } {
    return { ...this.engine.hash };
  }

  /**
   * FLUSH: compacts every chain towards its head (dropping tombstones) and returns the emptied
   * slabs to the allocator, in a pass of its own.
   */
  flush(): Promise<void> {
    return this.runOp('flush', () => this.engine.flush());
  }

  /** Rebuilds the table with `buckets` buckets (default: the count its size calls for at the target chain length of 0.7). */
  rehash(buckets?: number): Promise<void> {
    return this.runOp('rehash', async () => {
      const target = buckets ?? bucketsFor(Math.max(1, this.engine.size), this.mode, SLAB_DEFAULTS.targetChainLength);
      integerIn(`${this.owner}.rehash`, 'buckets', target, 1, 2 ** 27);
      await this.engine.rebuild(target);
    });
  }

  /** Chains, slabs and memory, walked on the GPU. */
  stats(): Promise<SlabStats> {
    return this.runOp('stats', async () => {
      const e = this.engine;
      const [live = 0, tombs = 0, chainSlabs = 0, longest = 0, overflow = 0] = await e.chainStats();
      const slots = chainSlabs * e.perSlab;
      return {
        capacity: e.capacity,
        size: live,
        loadFactor: live / e.capacity,
        buckets: e.buckets,
        entriesPerSlab: e.perSlab,
        slabsAllocated: chainSlabs - e.buckets,
        poolSlabs: e.pool.poolSlabs,
        tombstones: tombs,
        averageChainLength: chainSlabs / e.buckets,
        maxChainLength: longest,
        overflowBuckets: overflow,
        slabUtilization: slots === 0 ? 0 : live / slots,
        memoryUtilization: chainSlabs === 0 ? 0 : (live * (this.mode === 'set' ? 4 : 8)) / (chainSlabs * SLAB_BYTES),
        memoryPerEntry: live === 0 ? 0 : (chainSlabs * SLAB_BYTES) / live,
        deviceBytes: e.bytes,
        poolGrowths: e.poolGrowths,
      };
    });
  }

  /**
   * The allocator alone (its benchmark): allocates n slabs from the pool, one per invocation as in
   * the paper's measurement, writing their indices to `out` (0xffffffff where the pool had none).
   * Give them back with `encodeFree` before using the table again.
   */
  encodeAllocate(encoder: GPUCommandEncoder, n: number, out: GPUBuffer, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.engine.encodeAllocate(encoder, n, out, timestampWrites);
  }

  /** Returns n slabs listed by `encodeAllocate` to the allocator. */
  encodeFree(encoder: GPUCommandEncoder, list: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.engine.encodeFree(encoder, list, n, timestampWrites);
  }
}
