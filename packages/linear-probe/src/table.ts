import {
  allocateEngine,
  type DictionaryCapability,
  DictionaryTable,
  type EncodeInsertOptions,
  type Gpu,
  InvalidArgumentError,
  integerIn,
  type KeyType,
  oneOf,
  resolveDictionaryOptions,
} from '@gpuhash/core';
import { LinearProbeEngine, nextPow2 } from './engine';
import type { LinearProbeInsertOptions, LinearProbeOptions, LinearProbeStats } from './types';
import { statsKernel } from './wgsl/kernels';

/** The test-only sizes (`windows`, `bulkPairWindow`): left out, or a power of two. */
function powerOfTwoOrUnset(where: string, name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= 1 && Number.isInteger(Math.log2(value))))
    throw new InvalidArgumentError(`${where}: ${name} must be a power of two, got ${String(value)}`);
}

/**
 * Open addressing with linear probing ("A Simple GPU Hash Table", Nosferalatu, 2020): u32 or u64 keys,
 * u32 values, power-of-two capacity, murmur3's finaliser as hash, a CAS to claim a slot.
 * Operations on one table run in call order on the device queue; each resolves when its results
 * (or the table's new size) are back on the host. The dictionary contract (input checks, results,
 * errors, ordering) is core's DictionaryTable; this class adds what is linear probing's own.
 */
export class LinearProbeTable<K extends KeyType = 'u32'> extends DictionaryTable<K, LinearProbeEngine<K>> {
  /** The defaults of every option but capacity. */
  static readonly defaults = { keyType: 'u32', maxLoadFactor: 0.8, growth: true, maxProbes: 4096, bulkInsert: 'auto' } as const;

  readonly capabilities: ReadonlySet<DictionaryCapability>;

  private constructor(gpu: Gpu, engine: LinearProbeEngine<K>) {
    super(gpu, engine, 'LinearProbeTable');
    this.capabilities = new Set<DictionaryCapability>([
      'apply',
      'device-apply',
      'resize',
      ...(engine.layout.name === 'u64' ? (['u64'] as const) : (['bulk-insert'] as const)),
    ]);
  }

  /**
   * Creates an empty table of at least `options.capacity` slots.
   *
   * @example
   * ```ts
   * import { requestGpu } from '@gpuhash/core';
   * import { LinearProbeTable } from '@gpuhash/linear-probe';
   *
   * const gpu = await requestGpu();
   * const table = await LinearProbeTable.create(gpu, { capacity: 1 << 20 });
   * await table.insert(new Uint32Array([17, 42]), new Uint32Array([1, 2]));
   * const { values, found } = await table.find(new Uint32Array([42, 5])); // [2, 0], [1, 0]
   * table.destroy();
   * ```
   *
   * @example 64-bit keys (as `BigUint64Array`), growth off: a fixed size that never rehashes
   * ```ts
   * const wide = await LinearProbeTable.create(gpu, { capacity: 1 << 16, keyType: 'u64', growth: false });
   * await wide.insert(new BigUint64Array([1n << 40n]), new Uint32Array([7]));
   * ```
   */
  static async create<K extends KeyType = 'u32'>(gpu: Gpu, options: LinearProbeOptions<K>): Promise<LinearProbeTable<K>> {
    const where = 'LinearProbeTable.create';
    const d = LinearProbeTable.defaults;
    const shared = resolveDictionaryOptions(where, options, d, ['keyType', 'maxProbes', 'windows', 'windowOrder', 'bulkPairWindow']);
    const maxProbes = options.maxProbes ?? d.maxProbes;
    integerIn(where, 'maxProbes', maxProbes, 1, 2 ** 31);
    const keyType = options.keyType ?? d.keyType;
    oneOf(where, 'keyType', keyType, ['u32', 'u64']);
    const { windows, windowOrder, bulkPairWindow } = options;
    powerOfTwoOrUnset(where, 'windows', windows);
    powerOfTwoOrUnset(where, 'bulkPairWindow', bulkPairWindow);
    if (windowOrder !== undefined) oneOf(where, 'windowOrder', windowOrder, ['auto', 'always', 'never']);
    const engine = await allocateEngine(
      gpu,
      where,
      () =>
        new LinearProbeEngine<K>(gpu, nextPow2(shared.capacity), {
          ...shared,
          keyType,
          maxProbes,
          windows,
          windowOrder,
          bulkPairWindow,
        }),
    );
    return new LinearProbeTable<K>(gpu, engine);
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

  /** Erased slots, as of the last host operation (reused by inserts, dropped by rebuilds). */
  get tombstones(): number {
    return this.engine.tombstones;
  }

  /** The probe bound in force (the option, capped at the capacity). */
  get maxProbes(): number {
    return this.engine.maxProbes;
  }

  /** The hash seed of the current layout: 0 until a rebuild for colliding keys draws another. */
  get hashSeed(): number {
    return this.engine.seed;
  }

  /**
   * The slots buffer (u32 keys: key, value; u64 keys: tag, lo, hi, value), for device-side code.
   * A table larger than one storage binding has several: see `slotsBuffers`.
   */
  get slotsBuffer(): GPUBuffer {
    if (this.isDestroyed) throw new InvalidArgumentError('LinearProbeTable.slotsBuffer: the table was destroyed');
    const windows = this.engine.slotsBuffers;
    if (windows.length > 1)
      throw new InvalidArgumentError(
        `LinearProbeTable.slotsBuffer: the table spans ${windows.length} buffers of ${this.engine.windowSlots} slots; use slotsBuffers`,
      );
    return windows[0] as GPUBuffer;
  }

  /**
   * The slot windows in slot order: slot s lives in buffer floor(s / windowSlots), at
   * s % windowSlots. One buffer when the table fits one storage binding.
   */
  get slotsBuffers(): readonly GPUBuffer[] {
    if (this.isDestroyed) throw new InvalidArgumentError('LinearProbeTable.slotsBuffers: the table was destroyed');
    return this.engine.slotsBuffers;
  }

  /** Slots per buffer of `slotsBuffers` (the capacity, or the largest power of two the device binds whole). */
  get windowSlots(): number {
    return this.engine.windowSlots;
  }

  /**
   * Inserts n pairs from device buffers; no growth, failures land in the failed list (see `sync`).
   * Large batches into u32 tables without tombstones take the partitioned bulk path (see
   * wgsl/bulk.ts); `timestampWrites` then spans all of its passes. Returns the path taken.
   */
  override encodeInsert(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    options: EncodeInsertOptions & LinearProbeInsertOptions = {},
  ): 'bulk' | 'atomic' {
    return super.encodeInsert(encoder, keys, values, n, options) as 'bulk' | 'atomic';
  }

  /**
   * Rebuilds the table into `capacity` slots (rounded up to a power of two; default: the current
   * capacity), dropping tombstones. Shrinks too, down to what the live keys need.
   */
  rehash(capacity?: number): Promise<void> {
    return this.runOp('rehash', async () => {
      const target = capacity ?? this.engine.capacity;
      integerIn('LinearProbeTable.rehash', 'capacity', target, 1, Number.MAX_SAFE_INTEGER);
      if (target < this.engine.size)
        throw new InvalidArgumentError(`LinearProbeTable.rehash: ${target} slots cannot hold the table's ${this.engine.size} keys`);
      await this.engine.rebuild(nextPow2(target), false);
    });
  }

  /** Occupancy and probe lengths, computed on the GPU. */
  stats(): Promise<LinearProbeStats> {
    return this.runOp('stats', async () => {
      const e = this.engine;
      const out = this.temporary(this.gpu.createArray('u32', 5, 'linear-probe.stats'));
      const encoder = this.gpu.device.createCommandEncoder();
      statsKernel.variant({ layout: e.layout.name, ...e.windowing }).encode(this.gpu, encoder, {
        buffers: { slots_ro: e.slotsBinding, out: out.buffer },
        params: { n: e.capacity, mask: e.capacity - 1, max_probes: e.maxProbes, seed: e.seed },
        invocations: e.capacity,
        maxWorkgroups: 4096,
      });
      this.gpu.submit([encoder.finish()]);
      const [live = 0, tombs = 0, lo = 0, hi = 0, longest = 0] = await this.gpu.download(out);
      const sum = hi * 2 ** 32 + lo;
      return {
        capacity: e.capacity,
        size: live,
        tombstones: tombs,
        loadFactor: live / e.capacity,
        averageProbeLength: live === 0 ? 0 : 1 + sum / live,
        maxProbeLength: live === 0 ? 0 : 1 + longest,
        maxProbes: e.maxProbes,
        rehashes: e.rehashes,
      };
    });
  }

  /** @internal Read-ahead of inserts and lookups, for tools/gpu-check's perf-insert. */
  get probing(): LinearProbeEngine<K>['probing'] {
    return this.engine.probing;
  }
}
