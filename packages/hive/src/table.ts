import { BufferUsage, DestroyedError, DeviceArray, type Gpu, InvalidArgumentError } from '@gpuhash/core';
import { Dispatcher, OP_CHUNK, type OpBatch } from './dispatcher';
import { Resizer } from './resizer';
import { assertNoReservedKeys, CONTENDED_FLAG, RESERVED_FLAG, withoutContention } from './sentinels';
import { BUCKET_SLOTS, type SplitPointer } from './split-pointer';
import { bulkRecordsBytes, HiveStorage, limitError, maxBuckets, slotsBytes } from './storage';
import type {
  ApplyBatch,
  ApplyResult,
  DeviceApplyBatch,
  DeviceApplyResult,
  DeviceFindResult,
  FindResult,
  HiveOptions,
  HiveStats,
  InsertResult,
  KeysInput,
  U32Input,
} from './types';
import { BULK_WORKGROUP_BYTES, PLAN_FROM_LOAD } from './wgsl/bulk';
import { COUNTER_WORDS, Counter, LIST_HEADER, List, MODE_APPLY, MODE_ASSIGN, MODE_INSERT } from './wgsl/common';
import { MAX_EVICTIONS } from './wgsl/cuckoo';
import { eraseKernel } from './wgsl/erase';
import { findKernel } from './wgsl/find';
import { retrieveKernel, STATS_WORDS, StatsWord, statsKernel } from './wgsl/inspect';

interface Batch {
  n: number;
  keys: GPUBuffer;
  values?: GPUBuffer;
  /** Buffers this call uploaded and must destroy. */
  temporary: GPUBuffer[];
}

/**
 * The Hive hash table (seed 000): u32 keys and values in 32-slot buckets with a free mask each,
 * two candidate buckets per key, lock-free claims and update lookups by cooperative groups (WABC,
 * WCME), finds that read a key's 32-byte home sector first, bounded cuckoo eviction under bucket
 * locks, an overflow stash, and linear-hashing resize.
 * Operations on one table run in call order on the device queue; each resolves when its results
 * (or the table's new size) are back on the host.
 */
export class HiveTable {
  private readonly storage: HiveStorage;
  private readonly d: Dispatcher;
  private readonly resizer: Resizer;
  private sizeValue = 0;
  private stashValue = 0;
  private readonly totals = { evictions: 0, lockConflicts: 0, lockAcquisitions: 0, stashedTotal: 0, lockedInserts: 0 };
  /** Set by device-side encodes: the host copies of size and stash are unknown until `sync()`. */
  private stale = false;
  private destroyed = false;
  readonly maxLoadFactor: number;
  readonly minLoadFactor: number;
  readonly growth: boolean;
  readonly resizeBatch: number;
  readonly maxEvictions: number;
  /** Whether the cooperative groups are subgroups (else groups of one invocation). */
  readonly subgroups: boolean;
  /** Which insert batches take the bulk build (see HiveOptions.bulkInsert). */
  readonly bulkInsert: 'auto' | 'always' | 'never';

  private constructor(
    readonly gpu: Gpu,
    buckets: number,
    options: HiveOptions,
    subgroups: boolean,
  ) {
    this.maxLoadFactor = options.maxLoadFactor ?? 0.9;
    this.minLoadFactor = options.minLoadFactor ?? 0.35;
    this.growth = options.growth ?? true;
    this.resizeBatch = options.resizeBatch ?? 4096;
    this.maxEvictions = options.maxEvictions ?? 8;
    this.subgroups = subgroups;
    this.bulkInsert = options.bulkInsert ?? 'auto';
    this.storage = new HiveStorage(gpu, buckets);
    this.d = new Dispatcher(gpu, this.storage, buckets, subgroups, this.maxEvictions, options.opChunk ?? OP_CHUNK);
    this.resizer = new Resizer(gpu, this.storage, this.d, this, {
      size: () => this.sizeValue,
      stashSize: () => this.stashValue,
      refresh: () => this.refresh(),
    });
  }

  /** Creates an empty table of at least `options.capacity` slots (whole 32-slot buckets). */
  static async create(gpu: Gpu, options: HiveOptions): Promise<HiveTable> {
    const { capacity } = options;
    const where = 'HiveTable.create';
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`${where}: capacity must be a positive integer, got ${capacity}`);
    const maxLoad = options.maxLoadFactor ?? 0.9;
    const minLoad = options.minLoadFactor ?? 0.35;
    if (!(maxLoad > 0 && maxLoad <= 1)) throw new RangeError(`${where}: maxLoadFactor must be in (0, 1], got ${maxLoad}`);
    if (!(minLoad >= 0 && minLoad < maxLoad))
      throw new RangeError(`${where}: minLoadFactor must be in [0, maxLoadFactor), got ${minLoad} with maxLoadFactor ${maxLoad}`);
    const batch = options.resizeBatch ?? 4096;
    if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`${where}: resizeBatch must be a positive integer, got ${batch}`);
    const evict = options.maxEvictions ?? 8;
    if (!Number.isInteger(evict) || evict < 1 || evict > MAX_EVICTIONS)
      throw new RangeError(`${where}: maxEvictions must be an integer in 1..${MAX_EVICTIONS}, got ${evict}`);
    const chunk = options.opChunk ?? 1;
    if (!Number.isInteger(chunk) || chunk < 1) throw new RangeError(`${where}: opChunk must be a positive integer, got ${chunk}`);
    const bulk = options.bulkInsert ?? 'auto';
    if (bulk !== 'auto' && bulk !== 'always' && bulk !== 'never')
      throw new RangeError(`${where}: bulkInsert must be 'auto', 'always' or 'never', got ${String(bulk)}`);
    const subgroups = options.subgroups ?? gpu.subgroups.supported;
    if (subgroups && !gpu.subgroups.supported)
      throw new InvalidArgumentError(`${where}: subgroups: true, but this device was created without the 'subgroups' feature`);
    const buckets = Math.max(1, Math.ceil(capacity / BUCKET_SLOTS));
    if (buckets > maxBuckets(gpu)) throw limitError(gpu, buckets);
    return gpu.run(where, async () => {
      const table = new HiveTable(gpu, buckets, options, subgroups);
      const encoder = gpu.device.createCommandEncoder();
      table.encodeClear(encoder);
      gpu.submit([encoder.finish()]);
      return table;
    });
  }

  /** Table slots (buckets x 32; the stash comes on top). */
  get capacity(): number {
    return this.d.buckets * BUCKET_SLOTS;
  }

  get buckets(): number {
    return this.d.buckets;
  }

  /** The linear-hashing state: round size and split pointer. */
  get splitPointer(): SplitPointer {
    return this.d.splitPointer;
  }

  /** Live keys (stash included), as of the last completed operation (see `sync()` after device-side encodes). */
  get size(): number {
    return this.sizeValue;
  }

  get loadFactor(): number {
    return this.sizeValue / this.capacity;
  }

  /** Keys in the overflow stash, as of the last completed operation. */
  get stashSize(): number {
    return this.stashValue;
  }

  /** Slots of the overflow stash (1/64 of the allocated buckets, at least one 32-slot line). */
  get stashCapacity(): number {
    return this.storage.stashLines * BUCKET_SLOTS;
  }

  // ---- host API ------------------------------------------------------------------------------

  /** Inserts pairs; a key already present keeps its value. Duplicates in a batch: one of their values is stored. */
  insert(keys: KeysInput, values: U32Input): Promise<InsertResult> {
    return this.runInsert('insert', keys, values, MODE_INSERT);
  }

  /** Inserts pairs, overwriting the value of keys already present. Duplicates in a batch: one of their values is stored. */
  insertOrAssign(keys: KeysInput, values: U32Input): Promise<InsertResult> {
    return this.runInsert('insertOrAssign', keys, values, MODE_ASSIGN);
  }

  /** Looks keys up. Host keys give host results; device keys give device-resident results. */
  find(keys: Uint32Array): Promise<FindResult>;
  find(keys: DeviceArray<'u32'>): Promise<DeviceFindResult>;
  find(keys: KeysInput): Promise<FindResult | DeviceFindResult> {
    return this.gpu.run('HiveTable.find', async () => {
      this.assertAlive();
      await this.refreshIfStale();
      const batch = this.prepare('find', keys);
      const values = this.gpu.createArray('u32', batch.n, 'hive.find.values');
      const found = this.gpu.createArray('u32', batch.n, 'hive.find.found');
      const encoder = this.gpu.device.createCommandEncoder();
      this.encodeFind(encoder, batch.keys, batch.n, values.buffer, found.buffer);
      this.gpu.submit([encoder.finish()]);
      this.release(batch);
      if (keys instanceof DeviceArray) return { values, found };
      const hostValues = await this.gpu.download(values);
      const hostFound = await this.gpu.download(found);
      values.destroy();
      found.destroy();
      return { values: hostValues, found: Uint8Array.from(hostFound) };
    });
  }

  /** 1 for each key present, else 0. */
  async contains(keys: Uint32Array): Promise<Uint8Array> {
    return (await this.find(keys)).found;
  }

  /** Erases keys; returns how many were present. May contract the table (see minLoadFactor). */
  erase(keys: KeysInput): Promise<number> {
    return this.gpu.run('HiveTable.erase', async () => {
      this.assertAlive();
      await this.refreshIfStale();
      const batch = this.prepare('erase', keys);
      const before = this.sizeValue;
      const encoder = this.gpu.device.createCommandEncoder();
      this.encodeErase(encoder, batch.keys, batch.n);
      this.gpu.submit([encoder.finish()]);
      this.release(batch);
      const failed = await this.refresh();
      const erased = before - this.sizeValue;
      this.throwOnReserved('erase', failed);
      await this.resizer.contractIfSparse();
      return erased;
    });
  }

  /**
   * Runs a mixed batch: every op runs concurrently with the others. A find of a key that an insert
   * in the same batch adds may or may not see it (and sees its value if it does); a find never sees
   * a value that was not stored under its key; a key acknowledged before the batch and not erased
   * by it is always found. Ops on distinct keys give the sequential outcome. Host arrays give host
   * results; device arrays give the (value, status) pairs on the device.
   */
  apply(batch: ApplyBatch): Promise<ApplyResult>;
  apply(batch: DeviceApplyBatch): Promise<DeviceApplyResult>;
  apply(batch: ApplyBatch | DeviceApplyBatch): Promise<ApplyResult | DeviceApplyResult> {
    return this.gpu.run('HiveTable.apply', async () => {
      this.assertAlive();
      await this.refreshIfStale();
      return batch.keys instanceof DeviceArray ? this.applyOnDevice(batch as DeviceApplyBatch) : this.applyFromHost(batch as ApplyBatch);
    });
  }

  private async applyFromHost(batch: ApplyBatch): Promise<ApplyResult> {
    if (!(batch.keys instanceof Uint32Array)) throw new InvalidArgumentError('apply: keys must be a Uint32Array or a DeviceArray');
    assertNoReservedKeys(batch.keys, 'apply');
    const n = batch.keys.length;
    if (batch.ops.length !== n) throw new InvalidArgumentError(`apply: ops has ${batch.ops.length} entries but keys has ${n}`);
    if (batch.values && batch.values.length !== n)
      throw new InvalidArgumentError(`apply: values has ${batch.values.length} entries but keys has ${n}`);
    let inserts = 0;
    for (let i = 0; i < n; i++) {
      const op = batch.ops[i] as number;
      if (op > 3) throw new RangeError(`apply: op ${op} at index ${i} is not an Op code (0 insert, 1 insertOrAssign, 2 find, 3 erase)`);
      if (op <= 1) inserts++;
    }
    if (n === 0) return { values: new Uint32Array(0), status: new Uint8Array(0), failed: new Uint32Array(0) };
    await this.resizer.growFor(inserts);
    const ops = this.gpu.upload(Uint32Array.from(batch.ops));
    const keys = this.gpu.upload(batch.keys);
    const values = this.gpu.upload(batch.values ?? new Uint32Array(n));
    const out = this.gpu.createArray('u32', 2 * n, 'hive.apply.out');
    try {
      let failed = await this.runApplyPasses(ops.buffer, keys.buffer, values.buffer, out.buffer, n);
      const both = await this.gpu.download(out);
      const resultValues = new Uint32Array(n);
      const status = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        resultValues[i] = both[2 * i] as number;
        status[i] = both[2 * i + 1] as number;
      }
      failed = await this.retryFailedInserts(batch, failed, status);
      await this.resizer.contractIfSparse();
      return { values: resultValues, status, failed };
    } finally {
      for (const a of [ops, keys, values, out]) a.destroy();
    }
  }

  /**
   * Inserts of a mixed batch that lost the bucket locks for LOCKED_ROUNDS rounds in a row (many
   * ops of the batch on a few hot keys) run again as a batch of their own, up to 8 times: they take
   * effect after the rest of the batch, a legal order for concurrent ops. What still fails (a full
   * stash without growth) is reported.
   */
  private async retryFailedInserts(batch: ApplyBatch, failed: Uint32Array, status: Uint8Array): Promise<Uint32Array> {
    for (let attempt = 0; failed.length > 0 && attempt < 8; attempt++) {
      const m = failed.length;
      await this.resizer.growFor(m);
      const ops = this.gpu.upload(Uint32Array.from(failed, (i) => batch.ops[i] as number));
      const keys = this.gpu.upload(Uint32Array.from(failed, (i) => batch.keys[i] as number));
      const values = this.gpu.upload(Uint32Array.from(failed, (i) => batch.values?.[i] ?? 0));
      const out = this.gpu.createArray('u32', 2 * m, 'hive.apply.retry.out');
      try {
        const again = await this.runApplyPasses(ops.buffer, keys.buffer, values.buffer, out.buffer, m);
        const both = await this.gpu.download(out);
        for (let j = 0; j < m; j++) status[failed[j] as number] = both[2 * j + 1] as number;
        failed = Uint32Array.from(again, (j) => failed[j] as number);
      } finally {
        for (const a of [ops, keys, values, out]) a.destroy();
      }
    }
    return failed;
  }

  private async applyOnDevice(batch: DeviceApplyBatch): Promise<DeviceApplyResult> {
    const n = batch.keys.length;
    for (const [name, a] of [
      ['ops', batch.ops],
      ['keys', batch.keys],
      ['values', batch.values],
    ] as const) {
      if (a === undefined) continue;
      if (!(a instanceof DeviceArray) || a.type !== 'u32')
        throw new InvalidArgumentError(`apply: ${name} must be a DeviceArray<'u32'> like keys`);
      if (a.length !== n) throw new InvalidArgumentError(`apply: ${name} has ${a.length} entries but keys has ${n}`);
    }
    // How many ops insert is only known on the device: make room as if all of them did.
    await this.resizer.growFor(n);
    const zeros = batch.values ? undefined : this.gpu.createArray('u32', n, 'hive.apply.values');
    const out = this.gpu.createArray('u32', 2 * n, 'hive.apply.out');
    try {
      const values = (batch.values ?? (zeros as DeviceArray<'u32'>)).buffer;
      const failed = await this.runApplyPasses(batch.ops.buffer, batch.keys.buffer, values, out.buffer, n);
      this.throwOnReserved('apply', failed);
      await this.resizer.contractIfSparse();
      return { out, failed };
    } catch (error) {
      out.destroy();
      throw error;
    } finally {
      zeros?.destroy();
    }
  }

  /** Removes every key (keeps the capacity). */
  clear(): Promise<void> {
    return this.gpu.run('HiveTable.clear', async () => {
      this.assertAlive();
      const encoder = this.gpu.device.createCommandEncoder();
      this.encodeClear(encoder);
      this.gpu.submit([encoder.finish()]);
    });
  }

  /** Every live pair (table and stash), in no particular order. */
  retrieveAll(): Promise<{ keys: Uint32Array; values: Uint32Array }> {
    return this.gpu.run('HiveTable.retrieveAll', async () => {
      this.assertAlive();
      await this.refreshIfStale();
      const count = this.sizeValue;
      const keys = this.gpu.createArray('u32', count, 'hive.retrieve.keys');
      const values = this.gpu.createArray('u32', count, 'hive.retrieve.values');
      const cursor = this.gpu.createArray('u32', 1, 'hive.retrieve.cursor');
      const jobs = (this.d.buckets + this.storage.stashLines) * BUCKET_SLOTS;
      const encoder = this.gpu.device.createCommandEncoder();
      this.d.dispatch(encoder, retrieveKernel(), jobs, [this.storage.slots, keys.buffer, values.buffer, cursor.buffer], {
        n: jobs,
        aux0: this.d.buckets,
      });
      this.gpu.submit([encoder.finish()]);
      const written = (await this.gpu.download(cursor))[0] as number;
      if (written !== count)
        throw new Error(`retrieveAll: the table holds ${written} keys but its size says ${count}; this is a gpuhash bug`);
      const result = { keys: await this.gpu.download(keys), values: await this.gpu.download(values) };
      for (const a of [keys, values, cursor]) a.destroy();
      return result;
    });
  }

  /**
   * Makes room for `n` keys under the upper load threshold (splits buckets now), and keeps that
   * capacity through later automatic contraction. Throws LimitExceededError past one binding.
   */
  reserve(n: number): Promise<void> {
    return this.gpu.run('HiveTable.reserve', async () => {
      this.assertAlive();
      if (!Number.isInteger(n) || n < 0) throw new RangeError(`reserve: n must be a non-negative integer, got ${n}`);
      await this.refreshIfStale();
      const target = Math.max(1, Math.ceil(n / (this.maxLoadFactor * BUCKET_SLOTS)));
      if (target > maxBuckets(this.gpu)) throw limitError(this.gpu, target);
      await this.resizer.expandTo(target);
      this.resizer.floor = Math.max(this.resizer.floor, target);
    });
  }

  /**
   * Contracts the table (merging buckets) to the fewest that hold its keys under the upper load
   * threshold, as far as merges succeed, then releases the memory the buckets no longer need
   * (when the stash is empty). Later automatic contraction may go down to this capacity.
   */
  shrinkToFit(): Promise<void> {
    return this.gpu.run('HiveTable.shrinkToFit', async () => {
      this.assertAlive();
      await this.refreshIfStale();
      await this.resizer.contractTo(Math.max(1, Math.ceil(this.sizeValue / (this.maxLoadFactor * BUCKET_SLOTS))));
      this.resizer.floor = this.d.buckets;
      await this.resizer.fit();
    });
  }

  /** Occupancy counted on the GPU, with the stash, eviction, lock and resize counters. */
  stats(): Promise<HiveStats> {
    return this.gpu.run('HiveTable.stats', async () => {
      this.assertAlive();
      await this.refresh();
      const out = this.gpu.createArray('u32', STATS_WORDS, 'hive.stats');
      const jobs = this.d.buckets + this.storage.stashLines;
      const encoder = this.gpu.device.createCommandEncoder();
      this.d.dispatch(encoder, statsKernel(), jobs, [this.storage.slots, this.storage.meta, out.buffer], {
        n: jobs,
        aux0: this.d.buckets,
      });
      this.gpu.submit([encoder.finish()]);
      const words = await this.gpu.download(out);
      out.destroy();
      const w = (i: number) => words[i] as number;
      if (w(StatsWord.inconsistent) !== 0 || w(StatsWord.locksHeld) !== 0) {
        throw new Error(
          `stats: ${w(StatsWord.inconsistent)} slots disagree with their free masks and ${w(StatsWord.locksHeld)} bucket locks are held between batches; this is a gpuhash bug`,
        );
      }
      const size = w(StatsWord.tableKeys) + w(StatsWord.stashKeys);
      const p = this.splitPointer;
      return {
        capacity: this.capacity,
        size,
        loadFactor: size / this.capacity,
        buckets: this.d.buckets,
        allocatedBuckets: this.storage.nalloc,
        roundBuckets: p.n0,
        splitPointer: p.split,
        fullBuckets: w(StatsWord.fullBuckets),
        stashSize: w(StatsWord.stashKeys),
        stashCapacity: this.stashCapacity,
        stashLoad: w(StatsWord.stashKeys) / this.stashCapacity,
        ...this.totals,
        ...this.resizer.counts,
      };
    });
  }

  /** Reads the table's size and counters back after device-side encodes. */
  sync(): Promise<void> {
    return this.gpu.run('HiveTable.sync', async () => {
      this.assertAlive();
      await this.refresh();
    });
  }

  /**
   * Sizes the per-batch scratch for batches of up to n keys (the lists hold one chunk of 2^22 keys
   * at most; the bulk build's records and spill list, when such a batch would take it), so that
   * later encodes never reallocate it: an encode that grows scratch destroys the old buffers,
   * invalidating passes already recorded into an unsubmitted encoder.
   */
  reserveBatch(n: number): void {
    this.assertAlive();
    this.storage.ensureLists(Math.min(n, this.d.chunk));
    if (this.useBulk(n)) this.storage.bulkScratch(n, this.d.buckets);
  }

  /** Frees the table's GPU memory. Later calls throw DestroyedError. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.storage.destroy();
  }

  // ---- device-side API: encode into the caller's command encoder, no host round trip ---------

  /** Empties the table: every slot, mask, lock and counter (keeps the capacity). */
  encodeClear(encoder: GPUCommandEncoder): void {
    this.assertAlive();
    const s = this.storage;
    s.encodeEmpty(encoder, s.slots, s.meta, s.nalloc);
    encoder.clearBuffer(s.counters);
    // Commands run in order, so every later encode sees an empty table.
    this.sizeValue = 0;
    this.stashValue = 0;
    this.stale = false;
  }

  /**
   * Inserts n pairs from device buffers, never resizing: pass A (lock-free), the release of
   * abandoned claims, pass B (locked: eviction and stash). Pending keys land in the failed list
   * (see `sync`). With timestamp writes, pass A writes the beginning and pass B the end.
   */
  encodeInsert(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    options: { assign?: boolean; timestampWrites?: GPUComputePassTimestampWrites } = {},
  ): void {
    this.assertAlive();
    const mode = options.assign ? MODE_ASSIGN : MODE_INSERT;
    this.stale = true;
    this.encodeInsertPasses(encoder, { keys, values, n, mode }, options.timestampWrites);
  }

  /** An insert batch by the bulk build when `useBulk` says so, else by the op passes. */
  private encodeInsertPasses(encoder: GPUCommandEncoder, b: OpBatch, timestampWrites?: GPUComputePassTimestampWrites): void {
    if (this.useBulk(b.n))
      this.d.encodeBulkInsert(encoder, b, this.storage.bulkScratch(b.n, this.d.buckets), this.bulkPlan(b.n), timestampWrites);
    else this.d.encodeOpPasses(encoder, b, timestampWrites);
  }

  /**
   * Whether a bulk build of n keys runs with the overflow plan (wgsl/bulk.ts): when it may take the
   * table past load PLAN_FROM_LOAD (by the size last read back: batches encoded on the device
   * leave it behind, which only moves the choice).
   */
  private bulkPlan(n: number): boolean {
    return this.sizeValue + n > PLAN_FROM_LOAD * this.d.buckets * BUCKET_SLOTS;
  }

  /**
   * Whether an insert batch of n keys takes the bulk build. Each region it touches costs a load and a
   * store of 8 KiB, worth it from about 64 keys a region: 'auto' asks for n >= capacity / 16. On a
   * software adapter workgroup memory is no faster than the rest, so 'auto' keeps the op passes.
   */
  private useBulk(n: number): boolean {
    if (this.bulkInsert === 'never' || n === 0) return false;
    const limits = this.gpu.limits;
    if (limits.maxComputeWorkgroupStorageSize < BULK_WORKGROUP_BYTES) return false;
    if (bulkRecordsBytes(n) > Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize)) return false;
    if (this.bulkInsert === 'always') return true;
    if (this.gpu.isSoftware) return false;
    return n >= 1 << 15 && n * 16 >= this.d.buckets * BUCKET_SLOTS;
  }

  /** Looks up n keys; writes values and found flags (u32 each). One pass. */
  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    this.assertAlive();
    if (n === 0) return;
    const s = this.storage;
    this.d.dispatch(
      encoder,
      findKernel(),
      n,
      [s.slots, keys, keys, outValues, outFound, s.counters, s.meta, s.slots],
      { n },
      { timestampWrites },
    );
  }

  /** Erases n keys. One pass. */
  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.assertAlive();
    const s = this.storage;
    s.ensureLists(Math.min(n, this.d.chunk));
    encoder.clearBuffer(s.lists, 0, LIST_HEADER * 4);
    if (n === 0) return;
    this.stale = true;
    this.d.dispatch(encoder, eraseKernel(this.subgroups), n, [s.slots, s.meta, keys, s.counters, s.lists], { n }, { timestampWrites });
  }

  /** A mixed batch; `out` receives (value, status) per op. Three passes, as encodeInsert. */
  encodeApply(
    encoder: GPUCommandEncoder,
    ops: GPUBuffer,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    out: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    this.assertAlive();
    this.stale = true;
    this.d.encodeOpPasses(encoder, { ops, keys, values, out, n, mode: MODE_APPLY }, timestampWrites);
  }

  // ---- internals -----------------------------------------------------------------------------

  private assertAlive(): void {
    if (this.destroyed) throw new DestroyedError('this HiveTable');
    this.gpu.assertUsable();
  }

  /**
   * Runs op passes over a whole batch from the host, one chunk per submission, reading each
   * chunk's failures back so that every failed index is reported however many there are.
   */
  /** A mixed batch's passes; the failed indices without the contention marker (host-array apply re-runs them, device-array apply reports them). */
  private async runApplyPasses(ops: GPUBuffer, keys: GPUBuffer, values: GPUBuffer, out: GPUBuffer, n: number): Promise<Uint32Array> {
    return withoutContention(await this.runOpPasses({ ops, keys, values, out, n, mode: MODE_APPLY }));
  }

  /**
   * An insert batch by the bulk build in one submission, when `useBulk` says so; otherwise, or when
   * the failed list may have overflowed (it keeps one chunk's worth), by `runOpPasses`, which reads
   * every failure back (inserting the batch again changes nothing: it is idempotent).
   */
  private async runBulkInsert(b: OpBatch): Promise<Uint32Array> {
    if (!this.useBulk(b.n)) return this.runOpPasses(b);
    const encoder = this.gpu.device.createCommandEncoder();
    this.stale = true;
    this.d.encodeBulkInsert(encoder, b, this.storage.bulkScratch(b.n, this.d.buckets), this.bulkPlan(b.n));
    this.gpu.submit([encoder.finish()]);
    const failed = await this.refresh();
    return failed.length < this.storage.listCap ? failed : this.runOpPasses(b);
  }

  private async runOpPasses(b: OpBatch): Promise<Uint32Array> {
    const failed: Uint32Array[] = [];
    for (let at = 0; at === 0 || at < b.n; at += this.d.chunk) {
      const encoder = this.gpu.device.createCommandEncoder();
      this.stale = true;
      this.d.encodeOpPasses(encoder, b, undefined, at, Math.min(this.d.chunk, b.n - at));
      this.gpu.submit([encoder.finish()]);
      failed.push(await this.refresh());
    }
    if (failed.length === 1) return failed[0] as Uint32Array;
    const all = new Uint32Array(failed.reduce((sum, f) => sum + f.length, 0));
    let o = 0;
    for (const f of failed) {
      all.set(f, o);
      o += f.length;
    }
    return all;
  }

  private prepare(what: string, keys: KeysInput, values?: U32Input): Batch {
    if (!(keys instanceof DeviceArray) && !(keys instanceof Uint32Array))
      throw new InvalidArgumentError(`${what}: keys must be a Uint32Array or a DeviceArray<'u32'>`);
    if (values !== undefined && !(values instanceof DeviceArray) && !(values instanceof Uint32Array))
      throw new InvalidArgumentError(`${what}: values must be a Uint32Array or a DeviceArray<'u32'>`);
    const n = keys.length;
    if (values !== undefined && values.length !== n) {
      throw new InvalidArgumentError(`${what}: keys has ${n} entries but values has ${values.length}`);
    }
    for (const a of [keys, values]) {
      if (a instanceof DeviceArray && a.type !== 'u32')
        throw new InvalidArgumentError(`${what}: device arrays must hold u32, got ${a.type}`);
    }
    if (keys instanceof Uint32Array) assertNoReservedKeys(keys, what);
    const temporary: GPUBuffer[] = [];
    const toBuffer = (a: U32Input): GPUBuffer => {
      if (a instanceof DeviceArray) return a.buffer;
      const uploaded = this.gpu.upload(a, `hive.${what}`);
      temporary.push(uploaded.buffer);
      return uploaded.buffer;
    };
    return { n, keys: toBuffer(keys), values: values === undefined ? undefined : toBuffer(values), temporary };
  }

  private release(batch: Batch): void {
    for (const b of batch.temporary) b.destroy();
  }

  /** Reads the counters and the batch lists' counts back; returns the failed batch indices. */
  private async refresh(): Promise<Uint32Array> {
    const s = this.storage;
    const bytes = (COUNTER_WORDS + LIST_HEADER) * 4;
    const report = this.gpu.pool.acquire(bytes, BufferUsage.COPY_SRC | BufferUsage.COPY_DST, 'hive.report');
    const encoder = this.gpu.device.createCommandEncoder();
    encoder.copyBufferToBuffer(s.counters, 0, report, 0, COUNTER_WORDS * 4);
    encoder.copyBufferToBuffer(s.lists, 0, report, COUNTER_WORDS * 4, LIST_HEADER * 4);
    this.gpu.submit([encoder.finish()]);
    const words = new Uint32Array(await this.gpu.readBytes(report, 0, bytes));
    this.gpu.pool.release(report);
    const c = (i: number) => words[i] as number;
    this.sizeValue = c(Counter.size);
    this.stashValue = c(Counter.stash);
    this.totals.evictions = c(Counter.evictions);
    this.totals.lockConflicts = c(Counter.lockConflicts);
    this.totals.lockAcquisitions = c(Counter.lockAcquisitions);
    this.totals.stashedTotal = c(Counter.stashedTotal);
    this.totals.lockedInserts = c(Counter.lockedInserts);
    this.stale = false;
    const failedCount = c(COUNTER_WORDS + List.failed);
    const kept = Math.min(failedCount, s.listCap);
    if (kept === 0) return new Uint32Array(0);
    return new Uint32Array(await this.gpu.readBytes(s.lists, (LIST_HEADER + List.failed * s.listCap) * 4, kept * 4));
  }

  private async refreshIfStale(): Promise<void> {
    if (this.stale) await this.refresh();
  }

  private throwOnReserved(what: string, failed: Uint32Array): void {
    const reserved = failed.filter((i) => (i & RESERVED_FLAG) !== 0).map((i) => i & ~RESERVED_FLAG);
    if (reserved.length > 0) {
      const first = Math.min(...reserved);
      const problem =
        what === 'apply'
          ? 'holds a reserved key (the empty and tombstone markers) or an op code other than 0..3'
          : "is reserved (the table's empty and tombstone markers)";
      throw new RangeError(
        `${what}: the entry at index ${first}${reserved.length > 1 ? ` (and ${reserved.length - 1} more)` : ''} ${problem}; it was skipped, the others were applied.`,
      );
    }
  }

  private runInsert(what: string, keys: KeysInput, values: U32Input, mode: number): Promise<InsertResult> {
    return this.gpu.run(`HiveTable.${what}`, async () => {
      this.assertAlive();
      await this.refreshIfStale();
      const batch = this.prepare(what, keys, values);
      const before = this.sizeValue;
      let failed: Uint32Array = new Uint32Array(0);
      try {
        await this.resizer.growFor(batch.n);
        // An insert batch is idempotent (present keys stay, or get the same batch values again), so
        // after expanding, the whole batch simply runs again: no key is ever dropped.
        for (let attempt = 0; ; attempt++) {
          const b: OpBatch = { keys: batch.keys, values: batch.values as GPUBuffer, n: batch.n, mode };
          failed = attempt === 0 ? await this.runBulkInsert(b) : await this.runOpPasses(b);
          this.throwOnReserved(what, failed);
          if (failed.length === 0 || attempt >= 8) break;
          // Inserts that lost their bucket locks to other ops of the batch run again, twice; after
          // that, full buckets are the likelier cause and growth (if on) decides.
          if (attempt < 2 && failed.some((i) => (i & CONTENDED_FLAG) !== 0)) continue;
          if (!this.growth) break;
          if (!(await this.resizer.expandTo(Math.ceil(this.d.buckets * 1.25) + 1))) break;
        }
        failed = withoutContention(failed);
      } finally {
        this.release(batch);
      }
      return { inserted: this.sizeValue - before, failed };
    });
  }

  /** @internal The raw buffers, for invariant checks in tests. */
  async debugSnapshot(): Promise<{ slots: Uint32Array; meta: Uint32Array; buckets: number; nalloc: number; stashLines: number }> {
    return this.gpu.run('HiveTable.debugSnapshot', async () => {
      this.assertAlive();
      const s = this.storage;
      const slots = new Uint32Array(await this.gpu.readBytes(s.slots, 0, slotsBytes(s.nalloc)));
      const meta = new Uint32Array(await this.gpu.readBytes(s.meta, 0, s.metaWords(s.nalloc) * 4));
      return { slots, meta, buckets: this.d.buckets, nalloc: s.nalloc, stashLines: s.stashLines };
    });
  }
}
