import {
  type BindingsLayout,
  BufferUsage,
  type DefinedKernel,
  type DictionaryEngine,
  type EncodeInsertOptions,
  type EncodeOptions,
  FailureList,
  type FailureReport,
  type Gpu,
  type KeySpec,
  LimitExceededError,
  ScratchArena,
  type StagedApply,
  type StagedBatch,
  u32KeySpec,
} from '@gpuhash/core';
import { randomUniversalParams, type UniversalParams } from '@gpuhash/kernels';
import { entriesPerSlab, expectedPoolSlabs, type SlabMode } from './geometry';
import { blockSlabs, type PoolGeometry, poolGeometryFor, SlabPool } from './pool';
import { BUSY_KEY } from './sentinels';
import { applyKernel, copiesKernel, eraseKernel, findKernel, insertKernel } from './wgsl/kernels';
import { allocateKernel, flushKernel, freeKernel, retrieveKernel, statsKernel } from './wgsl/maintenance';
import { COUNTER_WORDS, Counter, type SlabParams, type SlabParamValues } from './wgsl/params';

/** What a slab table was created with. */
export interface SlabSettings {
  mode: SlabMode;
  growth: boolean;
  /** The share of the pool that growth keeps in use (expected slabs / pool slabs). */
  maxLoadFactor: number;
  /** Lanes per cooperative group (a power of two, at most 16); subgroups: cooperative groups are subgroup tiles. */
  tile: number;
  subgroups: boolean;
  /** The universal hash's seed (a and b are drawn from it). */
  seed: number;
}

/** Reruns of the inserts that lost contended slots before they are reported. */
const MAX_CONTENDED_RERUNS = 8;
/** Reruns of inserts that found the pool exhausted while it had room, before it grows anyway. */
const MAX_UNGROWN_RERUNS = 4;

/**
 * SlabHash's storage and kernels behind the dictionary contract: B base slabs and a SlabAlloc pool
 * in one slab array, device counters (entries, tombstones, pool slabs in use, exhausted inserts)
 * and a failed list. No rehash is ever needed to insert: chains grow slab by slab, and when the
 * pool runs out the host grows it and reruns exactly the inserts that found no slab.
 */
export class SlabEngine implements DictionaryEngine<'u32'> {
  readonly keySpec: KeySpec<'u32'>;
  readonly scratch: ScratchArena;
  readonly perSlab: number;
  private readonly counters: GPUBuffer;
  private readonly failures: FailureList;
  /** Bound to `sel` when a pass runs over a whole batch. */
  private readonly noSelection: GPUBuffer;
  pool: SlabPool;
  hash: UniversalParams;
  size = 0;
  tombstones = 0;
  /** Pool slabs in chains, as of the last refresh. */
  slabsInUse = 0;
  /** Inserts of the last batch that found the pool exhausted. */
  exhausted = 0;
  /** Pool growths and bucket-count changes so far. */
  poolGrowths = 0;
  rehashes = 0;
  private salt = 0;
  /** The failed indices of the last insert attempt: the next attempt reruns only these. */
  private lastFailed: Uint32Array = new Uint32Array(0);

  constructor(
    private readonly gpu: Gpu,
    buckets: number,
    poolSlabsWanted: number,
    readonly settings: SlabSettings,
  ) {
    this.keySpec = u32KeySpec(BUSY_KEY, 'empty, tombstone and busy');
    this.scratch = new ScratchArena(gpu, 'slab');
    this.perSlab = entriesPerSlab(settings.mode);
    this.hash = hashFor(settings.seed);
    this.pool = new SlabPool(gpu, buckets, poolGeometryFor(poolSlabsWanted));
    this.counters = gpu.createBuffer(COUNTER_WORDS * 4, 'slab.counters');
    this.noSelection = gpu.createBuffer(16, 'slab.no-selection');
    this.failures = new FailureList(this.scratch);
  }

  get buckets(): number {
    return this.pool.buckets;
  }

  /** Entry slots of the base slabs and the whole pool: what the memory can hold. */
  get capacity(): number {
    return this.pool.totalSlabs * this.perSlab;
  }

  get growth(): boolean {
    return this.settings.growth;
  }

  get unique(): boolean {
    return this.settings.mode !== 'multimap';
  }

  // ---- device-side API -----------------------------------------------------------------------

  encodeClear(encoder: GPUCommandEncoder): void {
    this.pool.encodeClear(encoder);
    encoder.clearBuffer(this.counters);
    this.size = 0;
    this.tombstones = 0;
    this.slabsInUse = 0;
  }

  encodeInsert(encoder: GPUCommandEncoder, keys: GPUBuffer, values: GPUBuffer, n: number, options: EncodeInsertOptions = {}): void {
    this.failures.encodeReset(encoder, n);
    this.encodeInsertPass(encoder, keys, values, n, options.assign ?? false, undefined, options.timestampWrites);
  }

  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const buffers = { slabs_ro: this.pool.slabs, keys, sel: this.noSelection, out_values: outValues, out_found: outFound };
    this.dispatch(encoder, findKernel.variant(this.cooperative()), n, buffers, { timestampWrites });
  }

  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.encodeEraseKeys(encoder, keys, n, false, timestampWrites);
  }

  /** Erases every copy of each key (multimap), or the one copy (unique modes). */
  encodeEraseKeys(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    all: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    this.failures.encodeReset(encoder, n);
    const buffers = { slabs: this.pool.slabs, keys, sel: this.noSelection, counters: this.counters, failed: this.failures.buffer };
    this.dispatch(encoder, eraseKernel.variant({ ...this.cooperative(), all: all && !this.unique }), n, buffers, { timestampWrites });
  }

  encodeApply(
    encoder: GPUCommandEncoder,
    ops: GPUBuffer,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    out: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    this.failures.encodeReset(encoder, n);
    this.encodeApplyPass(encoder, ops, keys, values, n, out, undefined, timestampWrites);
  }

  /**
   * Copies per key (multimap `count`): out_counts[i]; or, with `offsets`, each key's values from
   * offsets[i] on (`findAll`).
   */
  encodeCopies(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outCounts: GPUBuffer,
    gather?: { offsets: GPUBuffer; values: GPUBuffer },
  ): void {
    const buffers = {
      slabs_ro: this.pool.slabs,
      keys,
      sel: this.noSelection,
      offsets: gather?.offsets ?? this.noSelection,
      out_counts: outCounts,
      out_values: gather?.values ?? this.scratch.get('no-values', 16),
    };
    this.dispatch(encoder, copiesKernel.variant({ ...this.cooperative(), gather: gather !== undefined }), n, buffers);
  }

  encodeRetrieve(encoder: GPUCommandEncoder, outKeys: GPUBuffer, outValues: GPUBuffer, cursor: GPUBuffer): void {
    encoder.clearBuffer(cursor, 0, 4);
    const slabs = this.pool.totalSlabs;
    const buffers = { slabs_ro: this.pool.slabs, out_keys: outKeys, out_values: outValues, cursor };
    this.dispatch(encoder, retrieveKernel.variant({ mode: this.settings.mode }), slabs, buffers, {
      invocations: slabs * this.perSlab,
      maxWorkgroups: 8192,
    });
  }

  /** The allocator alone: n slabs, one per invocation, their indices to `out` (NONE where none was left). */
  encodeAllocate(encoder: GPUCommandEncoder, n: number, out: GPUBuffer, timestampWrites?: GPUComputePassTimestampWrites): void {
    const buffers = { bitmap: this.pool.bitmap, out, counters: this.counters };
    const v = { subgroups: this.settings.subgroups, tile: this.settings.tile };
    this.dispatch(encoder, allocateKernel.variant(v), n, buffers, { timestampWrites });
  }

  /** Returns n listed slabs to the allocator (they must be all EMPTY: never written, or reset). */
  encodeFree(encoder: GPUCommandEncoder, list: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.dispatch(encoder, freeKernel.variant(), n, { bitmap: this.pool.bitmap, list, counters: this.counters }, { timestampWrites });
  }

  /** FLUSH every bucket: its own pass. */
  encodeFlush(encoder: GPUCommandEncoder, timestampWrites?: GPUComputePassTimestampWrites): void {
    const buffers = { slabs: this.pool.slabs, bitmap: this.pool.bitmap, counters: this.counters };
    this.dispatch(encoder, flushKernel.variant({ mode: this.settings.mode }), this.buckets, buffers, {
      timestampWrites,
      maxWorkgroups: 8192,
    });
  }

  reserveBatch(n: number): void {
    this.failures.reserve(n);
  }

  // ---- host-operation steps ------------------------------------------------------------------

  async refresh(): Promise<FailureReport> {
    const report = this.gpu.pool.acquire(32, BufferUsage.COPY_SRC | BufferUsage.COPY_DST, 'slab.report');
    const encoder = this.gpu.device.createCommandEncoder();
    encoder.copyBufferToBuffer(this.counters, 0, report, 0, COUNTER_WORDS * 4);
    encoder.copyBufferToBuffer(this.failures.buffer, 0, report, COUNTER_WORDS * 4, 4);
    this.gpu.submit([encoder.finish()]);
    const words = new Uint32Array(await this.gpu.readBytes(report, 0, COUNTER_WORDS * 4 + 4));
    this.gpu.pool.release(report);
    this.size = words[Counter.size] as number;
    this.tombstones = words[Counter.tombstones] as number;
    this.slabsInUse = words[Counter.slabs] as number;
    this.exhausted = words[Counter.exhausted] as number;
    return this.failures.read(this.gpu, words[COUNTER_WORDS] as number);
  }

  /** Attempt 0 runs the batch; later attempts rerun only the inserts the previous one reported. */
  async insertBatch(batch: StagedBatch, assign: boolean, attempt: number): Promise<FailureReport> {
    const encoder = this.gpu.device.createCommandEncoder();
    const rerun = attempt > 0 ? this.lastFailed : undefined;
    const n = rerun ? rerun.length : batch.n;
    this.failures.encodeReset(encoder, n);
    encoder.clearBuffer(this.counters, Counter.exhausted * 4, 4);
    const sel = rerun ? this.scratch.get('rerun', rerun.byteLength) : undefined;
    if (sel && rerun) this.gpu.device.queue.writeBuffer(sel, 0, Uint32Array.from(rerun));
    this.encodeInsertPass(encoder, batch.keys, batch.values as GPUBuffer, n, assign, sel);
    this.gpu.submit([encoder.finish()]);
    const report = await this.refresh();
    this.lastFailed = report.failed;
    // A rerun's list names only the reruns: the batch's refused entries come from attempt 0.
    if (!rerun) this.refusedOfBatch = report.reserved;
    return { ...report, reserved: this.refusedOfBatch };
  }
  private refusedOfBatch: Uint32Array = new Uint32Array(0);

  /**
   * Inserts that found the pool exhausted run again (rerunExhausted: as it is while it had room,
   * else after it grows, with growth on); inserts that lost contended slots run again a few times.
   * Anything else is reported.
   */
  async afterInsertFailures(report: FailureReport, attempt: number): Promise<'retry' | 'report'> {
    if (this.exhausted > 0) return (await this.rerunExhausted(attempt, this.growth)) ? 'retry' : 'report';
    return report.contended.length > 0 && attempt < MAX_CONTENDED_RERUNS ? 'retry' : 'report';
  }

  /**
   * Whether the last batch's inserts that found no slab run again. Groups racing to extend one chain
   * each hold a slab until one links and the others give theirs back (ops.ts), so many copies of
   * one key can find a pool with room empty: while the batch leaves the pool no fuller than growth
   * keeps it (maxLoadFactor), they run again as it is (a few times at most). Otherwise, with `grow`,
   * after the pool grows.
   */
  private async rerunExhausted(attempt: number, grow: boolean): Promise<boolean> {
    if (attempt < MAX_UNGROWN_RERUNS && this.slabsInUse <= this.settings.maxLoadFactor * this.pool.poolSlabs) return true;
    return grow && (await this.growPool(this.exhausted));
  }

  /** A mixed batch; inserts that found the pool exhausted run again as afterInsertFailures says. */
  async applyBatch(batch: StagedApply, out: GPUBuffer): Promise<FailureReport> {
    const reports: FailureReport[] = [];
    let rerun: Uint32Array | undefined;
    for (let attempt = 0; ; attempt++) {
      const encoder = this.gpu.device.createCommandEncoder();
      const n = rerun ? rerun.length : batch.n;
      this.failures.encodeReset(encoder, n);
      encoder.clearBuffer(this.counters, Counter.exhausted * 4, 4);
      const sel = rerun ? this.scratch.get('rerun', rerun.byteLength) : undefined;
      if (sel && rerun) this.gpu.device.queue.writeBuffer(sel, 0, Uint32Array.from(rerun));
      this.encodeApplyPass(encoder, batch.ops, batch.keys, batch.values, n, out, sel);
      this.gpu.submit([encoder.finish()]);
      const report = await this.refresh();
      reports.push(report);
      if (report.failed.length === 0) break;
      const again =
        this.exhausted > 0
          ? await this.rerunExhausted(attempt, this.growth)
          : report.contended.length > 0 && attempt < MAX_CONTENDED_RERUNS;
      if (!again) break;
      rerun = report.failed;
    }
    const first = reports[0] as FailureReport;
    const last = reports[reports.length - 1] as FailureReport;
    // The first pass names the refused entries; the last, what still failed.
    return {
      count: first.reserved.length + last.failed.length,
      failed: last.failed,
      reserved: first.reserved,
      contended: last.contended,
      truncated: first.truncated || last.truncated,
    };
  }

  /** Whether `incoming` more keys fit the pool, by the expected slab count, under maxLoadFactor. */
  fits(incoming: number): boolean {
    const need = expectedPoolSlabs(this.size + this.tombstones + incoming, this.buckets, this.perSlab);
    return need <= this.settings.maxLoadFactor * this.pool.poolSlabs;
  }

  /** Grows the pool ahead of a batch of up to `incoming` new keys, so that it seldom runs out mid-batch. */
  async makeRoom(incoming: number): Promise<void> {
    if (this.fits(incoming)) return;
    const need = expectedPoolSlabs(this.size + this.tombstones + incoming, this.buckets, this.perSlab) / this.settings.maxLoadFactor;
    await this.growPool(need - this.pool.poolSlabs);
  }

  async afterErase(): Promise<void> {}

  /**
   * Adds super blocks for at least `slabs` more slabs (at least doubling the pool). False when the
   * device's limits leave no room to grow.
   */
  async growPool(slabs: number): Promise<boolean> {
    const g = this.pool.geometry;
    const perSuper = blockSlabs({ ...g, superBlocks: 1 });
    // A pool smaller than its one block first grows to the whole block.
    let target =
      g.units < perSuper && slabs <= perSuper - g.units
        ? 1
        : Math.max(2 * g.superBlocks, g.superBlocks + Math.ceil(Math.max(1, slabs) / perSuper));
    if (target === 1 && g.superBlocks === 1) {
      this.pool.grow(1);
      this.poolGrowths++;
      return true;
    }
    while (target > g.superBlocks && !this.pool.canHold(target)) target = g.superBlocks + Math.floor((target - g.superBlocks) / 2);
    if (target <= g.superBlocks) return false;
    this.pool.grow(target);
    this.poolGrowths++;
    return true;
  }

  /**
   * Moves every entry into a table of `buckets` buckets (the bucket count is SlabHash's only size
   * parameter; the pool is sized for the entries). The old table stays intact until the new one
   * holds every entry.
   */
  async rebuild(buckets: number): Promise<void> {
    const n = this.size;
    const keys = this.gpu.createArray('u32', Math.max(1, n), 'slab.rehash.keys');
    const values = this.gpu.createArray('u32', Math.max(1, n), 'slab.rehash.values');
    const cursor = this.gpu.createArray('u32', 1, 'slab.rehash.cursor');
    try {
      const encoder = this.gpu.device.createCommandEncoder();
      this.encodeRetrieve(encoder, keys.buffer, values.buffer, cursor.buffer);
      this.gpu.submit([encoder.finish()]);
      const old = this.pool;
      const wanted = Math.ceil(expectedPoolSlabs(n, buckets, this.perSlab) / this.settings.maxLoadFactor);
      this.pool = new SlabPool(this.gpu, buckets, poolGeometryFor(wanted));
      const fill = this.gpu.device.createCommandEncoder();
      this.encodeClear(fill);
      this.gpu.submit([fill.finish()]);
      const batch: StagedBatch = { n, keys: keys.buffer, values: values.buffer, hostWords: undefined };
      for (let attempt = 0; ; attempt++) {
        const report = await this.insertBatch(batch, false, attempt);
        if (report.failed.length === 0) break;
        // A rebuild grows its pool whatever the growth option says: it must hold what the table holds.
        const again = this.exhausted > 0 ? await this.rerunExhausted(attempt, true) : attempt < MAX_CONTENDED_RERUNS;
        if (!again) {
          this.pool.destroy();
          this.pool = old;
          await this.restoreCounters(n);
          throw new LimitExceededError(
            'SlabHash.rehash',
            'pool size',
            n,
            this.size,
            `${buckets} buckets cannot hold the table's ${n} entries on this device.`,
          );
        }
      }
      old.destroy();
      this.rehashes++;
    } finally {
      keys.destroy();
      values.destroy();
      cursor.destroy();
    }
  }

  /** Flushes every chain (see encodeFlush) and reads the counters back. */
  async flush(): Promise<void> {
    const encoder = this.gpu.device.createCommandEncoder();
    this.encodeFlush(encoder);
    this.gpu.submit([encoder.finish()]);
    await this.refresh();
  }

  /** Chain statistics, walked on the GPU: live entries, tombstones, chain slabs, longest chain, buckets with more than one slab. */
  async chainStats(): Promise<Uint32Array> {
    const out = this.gpu.createArray('u32', 5, 'slab.stats');
    try {
      const encoder = this.gpu.device.createCommandEncoder();
      this.dispatch(
        encoder,
        statsKernel.variant({ mode: this.settings.mode }),
        this.buckets,
        { slabs_ro: this.pool.slabs, out: out.buffer },
        {
          maxWorkgroups: 4096,
          invocations: this.buckets,
        },
      );
      this.gpu.submit([encoder.finish()]);
      return await this.gpu.download(out);
    } finally {
      out.destroy();
    }
  }

  /** Bytes of device memory the table holds (slab array, bitmaps, counters). */
  get bytes(): number {
    return this.pool.bytes + COUNTER_WORDS * 4;
  }

  destroy(): void {
    this.pool.destroy();
    this.counters.destroy();
    this.noSelection.destroy();
  }

  // ---- internals -----------------------------------------------------------------------------

  private cooperative(): { mode: SlabMode; subgroups: boolean; tile: number } {
    return { mode: this.settings.mode, subgroups: this.settings.subgroups, tile: this.settings.tile };
  }

  private encodeInsertPass(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    assign: boolean,
    sel: GPUBuffer | undefined,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const buffers = {
      slabs: this.pool.slabs,
      bitmap: this.pool.bitmap,
      keys,
      values,
      sel: sel ?? this.noSelection,
      counters: this.counters,
      failed: this.failures.buffer,
    };
    const kernel = insertKernel.variant({ ...this.cooperative(), assign: assign && this.settings.mode !== 'set', reuse: this.unique });
    this.dispatch(encoder, kernel, n, buffers, { timestampWrites, selected: sel !== undefined });
  }

  private encodeApplyPass(
    encoder: GPUCommandEncoder,
    ops: GPUBuffer,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    out: GPUBuffer,
    sel: GPUBuffer | undefined,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const buffers = {
      slabs: this.pool.slabs,
      bitmap: this.pool.bitmap,
      ops,
      keys,
      values,
      sel: sel ?? this.noSelection,
      out,
      counters: this.counters,
      failed: this.failures.buffer,
    };
    this.dispatch(encoder, applyKernel.variant(this.cooperative()), n, buffers, { timestampWrites, selected: sel !== undefined });
  }

  private async restoreCounters(n: number): Promise<void> {
    // The old pool's counters were overwritten by the failed rebuild: recount them from its chains.
    const stats = await this.chainStats();
    const words = new Uint32Array(COUNTER_WORDS);
    words[Counter.size] = stats[0] as number;
    words[Counter.tombstones] = stats[1] as number;
    words[Counter.slabs] = (stats[2] as number) - this.buckets;
    this.gpu.device.queue.writeBuffer(this.counters, 0, words);
    this.size = n;
    await this.refresh();
  }

  /** One pass: params.n = n, over `invocations` (default n) invocations. */
  private dispatch<B extends BindingsLayout>(
    encoder: GPUCommandEncoder,
    kernel: DefinedKernel<B, SlabParams>,
    n: number,
    buffers: EncodeOptions<B, SlabParams>['buffers'],
    options: { invocations?: number; maxWorkgroups?: number; timestampWrites?: GPUComputePassTimestampWrites; selected?: boolean } = {},
  ): void {
    kernel.encode(this.gpu, encoder, {
      buffers,
      params: this.params(n, options.selected ?? false),
      invocations: options.invocations ?? n,
      maxWorkgroups: options.maxWorkgroups ?? 65_535 * 16,
      timestampWrites: options.timestampWrites,
      // Every slab kernel binds the params uniform; the conditional type cannot see it for a generic B.
    } as unknown as EncodeOptions<B, SlabParams>);
  }

  private params(n: number, selected: boolean): SlabParamValues {
    const g: PoolGeometry = this.pool.geometry;
    this.salt = (this.salt + 0x9e3779b9) >>> 0;
    return {
      n,
      use_sel: selected ? 1 : 0,
      buckets: this.buckets,
      hash_a: this.hash.a,
      hash_b: this.hash.b,
      pool_base: this.buckets,
      super_blocks: g.superBlocks,
      blocks_per_super: g.blocksPerSuper,
      block_words: g.blockWords,
      pool_units: g.units,
      max_hops: this.pool.totalSlabs,
      salt: this.salt,
    };
  }
}

/** The universal hash's (a, b), drawn from a seed by a fixed generator (so runs are reproducible). */
export function hashFor(seed: number): UniversalParams {
  let x = seed >>> 0 || 0x2545f491;
  return randomUniversalParams(() => {
    // xorshift32
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  });
}
