import {
  BufferUsage,
  type DictionaryEngine,
  decodeFailures,
  type EncodeInsertOptions,
  encodeOrderedFind,
  type FailureReport,
  type Gpu,
  type KeySpec,
  mergeFailures,
  ordersByWindow,
  ScratchArena,
  type StagedApply,
  type StagedBatch,
  u32KeySpec,
  WINDOW_ORDER_MIN_BATCH,
} from '@gpuhash/core';
import { Dispatcher, type OpBatch } from './dispatcher';
import { Resizer } from './resizer';
import { TOMBSTONE_KEY } from './sentinels';
import { BUCKET_SLOTS } from './split-pointer';
import { BUCKET_BYTES, bulkRecordsBytes, HiveStorage, slotsBytes } from './storage';
import { BULK_RECORD_BYTES, BULK_WORKGROUP_BYTES, PLAN_FROM_LOAD } from './wgsl/bulk';
import { COUNTER_WORDS, Counter, LIST_HEADER, List, MODE_APPLY, MODE_ASSIGN, MODE_INSERT } from './wgsl/common';
import { eraseKernel } from './wgsl/erase';
import { findKernel } from './wgsl/find';
import { retrieveKernel } from './wgsl/inspect';
import { windowCountKernel, windowGatherKernel, windowScatterKernel } from './wgsl/window-order';

export interface HiveSettings {
  maxLoadFactor: number;
  minLoadFactor: number;
  growth: boolean;
  resizeBatch: number;
  maxEvictions: number;
  subgroups: boolean;
  bulkInsert: 'auto' | 'always' | 'never';
  opChunk: number;
  windowOrder?: 'auto' | 'always' | 'never';
  bulkPartKeys?: number;
  windowBuckets?: number;
}

/**
 * Load under which pass A's inserts look at their home (a sector and the lock word) before
 * scanning their buckets, and claim a home slot straight away when the key is absent. Most homes
 * have room at low load; fuller, most inserts scan anyway after the look. On an H100 (2^27 slots,
 * 2026-11-27), against no look: 2^22-op mixed batches 8% faster at load 0.5, 2% slower at 0.75
 * and 4% at 0.9; op-pass builds of 2^20 slots 12% faster to 0.5, 6-8% slower to 0.9.
 */
export const HOME_VIEW_BELOW = 0.65;

/** Attempts at one insert batch before its failures are reported (each after a resize or a contended round). */
const MAX_ATTEMPTS = 64;

/**
 * Bulk builds take their spilled keys in window order past this many bytes of table buckets, when
 * the batch may take the table past load PLAN_FROM_LOAD (most keys spill there). On an H100,
 * builds to 0.9 of 2^30 slots (8 GiB) ran 424 -> 274 ms so, and of 2^29 slots (4 GiB) 74 -> 78 ms;
 * ordering every build cost builds to 0.5 4-6%.
 */
const SPILL_ORDER_FROM_BYTES = 2 ** 32;

/**
 * Hive's storage, kernels and resizing behind the dictionary contract: the op passes (WABC, WCME,
 * the locked pass with cuckoo eviction and the stash), the bulk build, and linear-hashing
 * expansion and contraction between batches.
 */
export class HiveEngine implements DictionaryEngine<'u32'> {
  readonly keySpec: KeySpec<'u32'> = u32KeySpec(TOMBSTONE_KEY, 'empty and tombstone');
  readonly scratch: ScratchArena;
  readonly storage: HiveStorage;
  readonly d: Dispatcher;
  readonly resizer: Resizer;
  size = 0;
  /** Keys of the insert batches encoded since the size was last read back (an upper bound of its growth). */
  private encodedInserts = 0;
  stashSize = 0;
  readonly totals = { evictions: 0, lockConflicts: 0, lockAcquisitions: 0, stashedTotal: 0, lockedInserts: 0 };

  constructor(
    private readonly gpu: Gpu,
    buckets: number,
    readonly settings: HiveSettings,
  ) {
    this.scratch = new ScratchArena(gpu, 'hive');
    this.storage = new HiveStorage(gpu, buckets, this.scratch, settings.windowBuckets);
    this.d = new Dispatcher(gpu, this.storage, buckets, settings.subgroups, settings.maxEvictions, settings.opChunk);
    this.resizer = new Resizer(gpu, this.storage, this.d, settings, {
      size: () => this.size,
      stashSize: () => this.stashSize,
      refresh: () => this.refresh(),
    });
  }

  get capacity(): number {
    return this.d.buckets * BUCKET_SLOTS;
  }

  get growth(): boolean {
    return this.settings.growth;
  }

  // ---- device-side API -----------------------------------------------------------------------

  /** Empties the table: every slot, mask, lock and counter (keeps the capacity). */
  encodeClear(encoder: GPUCommandEncoder): void {
    const s = this.storage;
    s.encodeEmpty(encoder, s.slotBuffers, s.meta, s.nalloc);
    encoder.clearBuffer(s.counters);
    this.size = 0;
    this.stashSize = 0;
    this.encodedInserts = 0;
  }

  /**
   * Inserts n pairs, never resizing: the bulk build when `useBulk` says so, else pass A
   * (lock-free), the release of abandoned claims, pass B (locked: eviction and stash). With
   * timestamp writes, the first pass writes the beginning and pass B the end.
   */
  encodeInsert(encoder: GPUCommandEncoder, keys: GPUBuffer, values: GPUBuffer, n: number, options: EncodeInsertOptions = {}): void {
    const b: OpBatch = { keys, values, n, mode: options.assign ? MODE_ASSIGN : MODE_INSERT };
    if (this.useBulk(n)) this.encodeBulk(encoder, b, options.timestampWrites);
    else this.d.encodeOpPasses(encoder, { ...b, homeView: this.homeView(n) }, options.timestampWrites);
    this.encodedInserts += n;
  }

  /**
   * One pass: each key's home sector first, the rest of its buckets and the stash where the
   * filters say. Over more than 2 GiB of slots, large batches go in window order (the order's
   * passes, the find walking them, the gather of its answers).
   */
  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    if (n === 0) return;
    const s = this.storage;
    const ordered = ordersByWindow(this.settings.windowOrder ?? 'auto', s.windowing.windows, n, slotsBytes(s.nalloc));
    const kernel = findKernel.variant({ ...s.windowing, ordered });
    if (!ordered) {
      this.d.dispatch(encoder, kernel, n, this.d.findBuffers(keys, outValues, outFound), { n }, { timestampWrites });
      return;
    }
    const count = windowCountKernel.variant(s.windowing);
    const scatter = windowScatterKernel.variant(s.windowing);
    encodeOrderedFind(
      this.gpu,
      encoder,
      n,
      s.windowing.windows,
      this.scratch,
      { values: outValues, found: outFound },
      {
        order: (p, options) =>
          p.pass === 'count'
            ? this.d.dispatch(encoder, count, options.invocations, { keys, ...p.buffers }, { n }, options)
            : this.d.dispatch(encoder, scatter, options.invocations, { keys, ...p.buffers }, { n }, options),
        find: (listed, order) =>
          this.d.dispatch(encoder, kernel, n, { ...this.d.findBuffers(keys, listed.out_values, listed.out_found), order }, { n }),
        gather: (gather, timestampWrites) => this.d.dispatch(encoder, windowGatherKernel.variant(), n, gather, { n }, { timestampWrites }),
      },
      timestampWrites,
    );
  }

  /** One pass. */
  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    const s = this.storage;
    s.ensureLists(Math.min(n, this.d.chunk));
    encoder.clearBuffer(s.lists, 0, LIST_HEADER * 4);
    if (n === 0) return;
    const buffers = { slots: s.slots, masks: s.meta, keys, counters: s.counters, lists: s.lists };
    this.d.dispatch(
      encoder,
      eraseKernel.variant({ subgroups: this.settings.subgroups, ...s.windowing }),
      n,
      buffers,
      { n },
      { timestampWrites },
    );
  }

  /** A mixed batch; `out` receives (value, status) per op. Its finds, the home pass, then the insert passes. */
  encodeApply(
    encoder: GPUCommandEncoder,
    ops: GPUBuffer,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    out: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    this.d.encodeOpPasses(encoder, { ops, keys, values, out, n, mode: MODE_APPLY, homeView: this.homeView(n) }, timestampWrites);
  }

  encodeRetrieve(encoder: GPUCommandEncoder, outKeys: GPUBuffer, outValues: GPUBuffer, cursor: GPUBuffer): void {
    const jobs = (this.d.buckets + this.storage.stashLines) * BUCKET_SLOTS;
    const buffers = { slots_ro: this.storage.slots, out_keys: outKeys, out_values: outValues, cursor };
    this.d.dispatch(encoder, retrieveKernel.variant(this.storage.windowing), jobs, buffers, { n: jobs, aux0: this.d.buckets });
  }

  /**
   * Sizes the per-batch scratch for batches of up to n keys (the lists hold one chunk of 2^22 keys
   * at most; the bulk build's records and spill list, when such a batch would take it).
   */
  reserveBatch(n: number): void {
    this.storage.ensureLists(Math.min(n, this.d.chunk));
    if (this.useBulk(n)) this.storage.bulkScratch(Math.min(n, this.bulkPartKeys), this.d.buckets);
  }

  // ---- host-operation steps ------------------------------------------------------------------

  /** Reads the counters and the batch lists' counts back; returns the failed list. */
  async refresh(): Promise<FailureReport> {
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
    this.size = c(Counter.size);
    this.encodedInserts = 0;
    this.stashSize = c(Counter.stash);
    this.totals.evictions = c(Counter.evictions);
    this.totals.lockConflicts = c(Counter.lockConflicts);
    this.totals.lockAcquisitions = c(Counter.lockAcquisitions);
    this.totals.stashedTotal = c(Counter.stashedTotal);
    this.totals.lockedInserts = c(Counter.lockedInserts);
    const count = c(COUNTER_WORDS + List.failed);
    const kept = Math.min(count, s.listCap);
    const raw =
      kept === 0
        ? new Uint32Array(0)
        : new Uint32Array(await this.gpu.readBytes(s.lists, (LIST_HEADER + List.failed * s.listCap) * 4, kept * 4));
    return decodeFailures(count, raw);
  }

  /**
   * The first attempt takes the bulk build when `useBulk` says so, in one submission; later
   * attempts, and a bulk build whose failed list may have overflowed (it keeps one chunk's worth),
   * run the op passes chunk by chunk, reading every failure back (inserting the batch again changes
   * nothing: it is idempotent).
   */
  async insertBatch(batch: StagedBatch, assign: boolean, attempt: number): Promise<FailureReport> {
    const b: OpBatch = { keys: batch.keys, values: batch.values as GPUBuffer, n: batch.n, mode: assign ? MODE_ASSIGN : MODE_INSERT };
    if (attempt > 0 || !this.useBulk(b.n)) return this.runOpPasses(b);
    const encoder = this.gpu.device.createCommandEncoder();
    this.encodeBulk(encoder, b);
    this.gpu.submit([encoder.finish()]);
    const report = await this.refresh();
    return report.count < this.storage.listCap ? report : this.runOpPasses(b);
  }

  /**
   * Inserts that lost their bucket locks to other ops of the batch run again, twice; after that,
   * full buckets are the likelier cause and growth (if on) expands the table: by a quarter, then
   * doubling, until the keys fit or the device's storage limit is reached.
   */
  async afterInsertFailures(report: FailureReport, attempt: number): Promise<'retry' | 'report'> {
    if (attempt >= MAX_ATTEMPTS) return 'report';
    if (attempt < 2 && report.contended.length > 0) return 'retry';
    if (!this.growth) return 'report';
    const factor = attempt < 4 ? 1.25 : 2;
    return (await this.resizer.expandTo(Math.ceil(this.d.buckets * factor) + 1)) ? 'retry' : 'report';
  }

  /**
   * A mixed batch. From the host, inserts that lost the bucket locks for LOCKED_ROUNDS rounds in a
   * row (many ops of the batch on a few hot keys) run again as a batch of their own, up to 8
   * times: they take effect after the rest of the batch, a legal order for concurrent ops.
   */
  async applyBatch(batch: StagedApply, out: GPUBuffer): Promise<FailureReport> {
    const report = await this.runOpPasses({ ops: batch.ops, keys: batch.keys, values: batch.values, out, n: batch.n, mode: MODE_APPLY });
    if (!batch.hostOps || !batch.hostWords || !batch.hostValues || report.failed.length === 0) return report;
    let failed = report.failed;
    for (let attempt = 0; failed.length > 0 && attempt < 8; attempt++) {
      const m = failed.length;
      if (this.growth && !this.fits(m)) await this.resizer.growFor(m);
      const pick = (a: Uint32Array) => Uint32Array.from(failed, (i) => a[i] as number);
      const arrays = [pick(batch.hostOps), pick(batch.hostWords), pick(batch.hostValues)].map((a) =>
        this.gpu.upload(a, 'hive.apply.retry'),
      );
      const retryOut = this.gpu.createArray('u32', 2 * m, 'hive.apply.retry.out');
      try {
        const [ops, keys, values] = arrays.map((a) => a.buffer) as [GPUBuffer, GPUBuffer, GPUBuffer];
        const again = await this.runOpPasses({ ops, keys, values, out: retryOut.buffer, n: m, mode: MODE_APPLY });
        const encoder = this.gpu.device.createCommandEncoder();
        // The retried ops' (value, status) pairs go back to their places in the batch's output.
        for (let j = 0; j < m; j++) encoder.copyBufferToBuffer(retryOut.buffer, 8 * j, out, 8 * (failed[j] as number), 8);
        this.gpu.submit([encoder.finish()]);
        failed = Uint32Array.from(again.failed, (j) => failed[j] as number);
      } finally {
        for (const a of [...arrays, retryOut]) a.destroy();
      }
    }
    return { ...report, count: failed.length, failed, contended: new Uint32Array(0), truncated: false };
  }

  fits(incoming: number): boolean {
    return this.size + incoming <= this.settings.maxLoadFactor * this.capacity;
  }

  makeRoom(incoming: number): Promise<void> {
    return this.resizer.growFor(incoming);
  }

  afterErase(): Promise<void> {
    return this.resizer.contractIfSparse();
  }

  destroy(): void {
    this.storage.destroy();
  }

  // ---- internals -----------------------------------------------------------------------------

  /**
   * Whether pass A's inserts look at their home first: when the table stays under HOME_VIEW_BELOW
   * after a batch of n ops (all inserts, at most), by the size last read back and the inserts
   * encoded since.
   */
  private homeView(n: number): boolean {
    return this.size + this.encodedInserts + n < HOME_VIEW_BELOW * this.capacity;
  }

  /** Op passes over a whole batch, one chunk per submission, reading each chunk's failures back. */
  private async runOpPasses(b: OpBatch): Promise<FailureReport> {
    const reports: FailureReport[] = [];
    for (let at = 0; at === 0 || at < b.n; at += this.d.chunk) {
      const encoder = this.gpu.device.createCommandEncoder();
      this.d.encodeOpPasses(encoder, { ...b, homeView: this.homeView(b.n) }, undefined, at, Math.min(this.d.chunk, b.n - at));
      this.gpu.submit([encoder.finish()]);
      reports.push(await this.refresh());
    }
    return mergeFailures(reports);
  }

  /** A bulk build of batch b, in parts of at most bulkPartKeys. */
  private encodeBulk(encoder: GPUCommandEncoder, b: OpBatch, timestampWrites?: GPUComputePassTimestampWrites): void {
    const part = this.bulkPartKeys;
    const s = this.storage;
    const scratch = s.bulkScratch(Math.min(b.n, part), this.d.buckets);
    const mode = this.settings.windowOrder ?? 'auto';
    // The load it may reach counts the inserts encoded since the size was read back: device batches
    // encoded back to back leave the size stale.
    const highLoad = this.size + this.encodedInserts + b.n > PLAN_FROM_LOAD * this.capacity;
    const orderSpill =
      mode === 'always'
        ? s.windowing.windows > 1
        : mode === 'auto' && highLoad && b.n >= WINDOW_ORDER_MIN_BATCH && s.nalloc * BUCKET_BYTES > SPILL_ORDER_FROM_BYTES;
    this.d.encodeBulkInsertParts(encoder, b, scratch, this.bulkPlan(b.n), part, orderSpill, timestampWrites);
  }

  /**
   * Keys of one part of a bulk build: its records (16 bytes a key), and the spill passes' lists
   * after them, fit one storage binding (2^27 - 64 keys on an H100), and parts start at offsets
   * the device can bind (multiples of minStorageBufferOffsetAlignment).
   */
  private get bulkPartKeys(): number {
    if (this.settings.bulkPartKeys !== undefined) return this.settings.bulkPartKeys;
    const limits = this.gpu.limits;
    const align = limits.minStorageBufferOffsetAlignment / 4;
    let part = Math.floor(Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize) / BULK_RECORD_BYTES);
    part -= part % align;
    while (part > align && bulkRecordsBytes(part) > Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize)) part -= align;
    return part;
  }

  /**
   * Whether a bulk build of n keys runs with the overflow plan (wgsl/bulk.ts): when it may take the
   * table past load PLAN_FROM_LOAD (by the size last read back).
   */
  private bulkPlan(n: number): boolean {
    return this.size + n > PLAN_FROM_LOAD * this.capacity;
  }

  /**
   * Whether an insert batch of n keys takes the bulk build. Each region it touches costs a load and
   * a store of 8 KiB, worth it from about 64 keys a region: 'auto' asks for n >= capacity / 16. On
   * a software adapter workgroup memory is no faster than the rest, so 'auto' keeps the op passes.
   */
  private useBulk(n: number): boolean {
    const mode = this.settings.bulkInsert;
    if (mode === 'never' || n === 0) return false;
    const limits = this.gpu.limits;
    if (limits.maxComputeWorkgroupStorageSize < BULK_WORKGROUP_BYTES) return false;
    if (mode === 'always') return true;
    if (this.gpu.isSoftware) return false;
    return n >= 1 << 15 && n * 16 >= this.capacity;
  }
}
