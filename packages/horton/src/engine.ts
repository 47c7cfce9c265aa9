import {
  BufferUsage,
  CapacityError,
  type DictionaryEngine,
  type EncodeInsertOptions,
  encodeExclusiveScan,
  encodeTimedSpan,
  FailureList,
  type FailureReport,
  type Gpu,
  type KeySpec,
  LimitExceededError,
  ScratchArena,
  STORAGE_USAGE,
  type StagedBatch,
  timestampEnds,
  u32KeySpec,
} from '@gpuhash/core';
import { bucketCountFor, SLOTS, WORDS_PER_BUCKET } from './geometry';
import { EMPTY_KEY, REMAP_KEY } from './sentinels';
import type { HortonMode } from './types';
import { BULK_RECORD_BYTES, bulkBuildKernel, bulkCountKernel, bulkRoomKernel, bulkScatterKernel, REGION_BUCKETS } from './wgsl/bulk';
import { bchtEraseKernel, eraseKernel, tidyKernel } from './wgsl/erase';
import { countingFindKernel, findKernel, retrieveKernel, statsKernel } from './wgsl/find';
import { fastInsertKernel, insertRoundKernel, roundArgsKernel } from './wgsl/insert';
import { type HortonParamValues, WORKGROUP_SIZE } from './wgsl/params';
import { bchtSecondKernel, spillPlaceKernel, spillSlotKernel } from './wgsl/spill';

/**
 * Locked rounds a device-side insert batch runs after its fast pass (keys still contended then are
 * reported as such). Host inserts run rounds in chunks of HOST_CHUNK until the queue is empty, up
 * to HOST_ROUNDS, then run again.
 */
export const INSERT_ROUNDS = 96;
/**
 * Rounds at the start of a batch of at least STRIKE_FREE_FROM keys in which a key that finds no
 * room is not struck (see insert.ts). Smaller batches strike from the first round: a small table
 * that is truly full reports its keys (or grows) sooner.
 */
const STRIKE_FREE_ROUNDS = 16;
const STRIKE_FREE_FROM = 1 << 20;
const HOST_CHUNK = 8;
const HOST_ROUNDS = 128;
/** Kernels that tally flush one global atomic per workgroup; capping the grid bounds that. */
const TALLY_WORKGROUPS = 4096;
/** Bits of an ownership stamp below its epoch, at least (more for larger batches). */
const MIN_PRIO_BITS = 16;

export interface HortonSettings {
  mode: HortonMode;
  maxLoadFactor: number;
  growth: boolean;
  repatriate: boolean;
  bulkInsert: 'auto' | 'always' | 'never';
}

/** 'auto' takes the bulk build for batches of at least this share of the table's slots. */
const BULK_MIN_SHARE = 1 / 16;
/**
 * Bulk builds that may take the table past this load claim with the plan (wgsl/bulk.ts: counts
 * per bucket, room bytes, claim classes). Below it few buckets overflow and the per-bucket counts
 * cost more than they save.
 */
const PLAN_FROM_LOAD = 0.8;

/** The spill passes' grid cap (their grids are sized to the queue on the device). */
const SPILL_MAX_WORKGROUPS = 65535;

/** Encodes `body` as one named stage of a profile (timed as a span), or just encodes it. */
type StageMarker = (label: string, body: () => void) => void;
const unstaged: StageMarker = (_, body) => body();

/** An insert batch under way: its queues swap after every round (`queues[0]` is the next round's input). */
interface InsertRun {
  s: Store;
  keys: GPUBuffer;
  values: GPUBuffer;
  n: number;
  assign: boolean;
  queues: [GPUBuffer, GPUBuffer];
  args: GPUBuffer;
  /** Locked rounds encoded so far. */
  rounds: number;
  /** The bulk build's room hints (a byte per bucket), which the spill passes read and take from. */
  hints?: GPUBuffer;
}

/** The table's storage: buckets, ownership stamps, counters (live keys, Type B buckets, primary keys pushed out). */
interface Store {
  buckets: GPUBuffer;
  locks: GPUBuffer;
  counters: GPUBuffer;
  bucketCount: number;
  seed: number;
}

/** What the counting lookup measured. */
export interface LookupCounts {
  hits: number;
  misses: number;
  hitBuckets: number;
  missBuckets: number;
}

/**
 * The Horton table's storage and kernels behind the dictionary contract: one buckets buffer
 * (16 words a bucket), one ownership stamp per bucket, counters, a failed list, and growth by
 * rebuilding into a larger table (or, for colliding keys, the same size with a new hash seed).
 */
export class HortonEngine implements DictionaryEngine<'u32'> {
  readonly keySpec: KeySpec<'u32'> = u32KeySpec(REMAP_KEY, 'empty and remap');
  readonly scratch: ScratchArena;
  private store: Store;
  private readonly failures: FailureList;
  private epoch = 0;
  private prioBits = MIN_PRIO_BITS;
  /** Failures of the previous attempt at the current host insert batch. */
  private lastFailures = Number.POSITIVE_INFINITY;
  size = 0;
  typeB = 0;
  /** Primary keys pushed out for secondary ones (push_primary) since the storage was built or cleared. */
  pushes = 0;
  rehashes = 0;

  constructor(
    private readonly gpu: Gpu,
    capacity: number,
    readonly settings: HortonSettings,
  ) {
    this.scratch = new ScratchArena(gpu, 'horton');
    this.store = this.allocate(bucketCountFor(capacity), 0);
    this.failures = new FailureList(this.scratch);
  }

  get growth(): boolean {
    return this.settings.growth;
  }

  get capacity(): number {
    return this.store.bucketCount * SLOTS;
  }

  get bucketCount(): number {
    return this.store.bucketCount;
  }

  get seed(): number {
    return this.store.seed;
  }

  get bucketsBuffer(): GPUBuffer {
    return this.store.buckets;
  }

  // ---- device-side API -----------------------------------------------------------------------

  encodeClear(encoder: GPUCommandEncoder): void {
    this.clearStore(encoder, this.store);
    this.size = 0;
    this.typeB = 0;
    this.pushes = 0;
  }

  encodeInsert(encoder: GPUCommandEncoder, keys: GPUBuffer, values: GPUBuffer, n: number, options: EncodeInsertOptions = {}): void {
    this.failures.encodeReset(encoder, n);
    this.encodeInsertInto(encoder, this.store, keys, values, n, options.assign ?? false, options.timestampWrites);
  }

  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    findKernel.variant({ mode: this.settings.mode }).encode(this.gpu, encoder, {
      buffers: { buckets_ro: this.store.buckets, keys, out_values: outValues, out_found: outFound },
      params: this.params(this.store, n),
      invocations: n,
      maxWorkgroups: 65_535,
      timestampWrites,
    });
  }

  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.failures.encodeReset(encoder, n);
    const s = this.store;
    const horton = this.settings.mode === 'horton';
    const q = this.queues(horton ? Math.min(n, s.bucketCount) : 0);
    encoder.clearBuffer(q.a, 0, 4);
    if (!horton) {
      bchtEraseKernel.variant().encode(this.gpu, encoder, {
        buffers: { buckets: s.buckets, keys, counters: s.counters, failed: this.failures.buffer },
        params: this.params(s, n),
        invocations: n,
        maxWorkgroups: TALLY_WORKGROUPS,
        timestampWrites,
      });
      return;
    }
    this.nextEpoch(encoder, s, 0);
    eraseKernel.variant().encode(this.gpu, encoder, {
      buffers: { buckets: s.buckets, locks: s.locks, keys, dirty: q.a, counters: s.counters, failed: this.failures.buffer },
      params: this.params(s, n),
      invocations: n,
      maxWorkgroups: TALLY_WORKGROUPS,
      timestampWrites: timestampEnds(timestampWrites).first,
    });
    roundArgsKernel.variant().encode(this.gpu, encoder, { buffers: { queue_in: q.a, queue_out: q.b, args: q.args }, invocations: 1 });
    tidyKernel.variant({ repatriate: this.settings.repatriate }).encode(this.gpu, encoder, {
      buffers: { buckets: s.buckets, queue_in: q.a, counters: s.counters },
      params: this.params(s, 0),
      indirect: { buffer: q.args, offset: 0 },
      timestampWrites: timestampEnds(timestampWrites).last,
    });
  }

  encodeRetrieve(encoder: GPUCommandEncoder, outKeys: GPUBuffer, outValues: GPUBuffer, cursor: GPUBuffer): void {
    this.encodeRetrieveFrom(encoder, this.store, outKeys, outValues, cursor);
  }

  reserveBatch(n: number): void {
    this.failures.reserve(n);
    this.queues(n);
    if (this.useBulk(this.store, n)) this.bulkScratch(this.store, n);
  }

  // ---- host-operation steps ------------------------------------------------------------------

  async refresh(): Promise<FailureReport> {
    const { words, failures } = await this.readReport(this.store.counters);
    this.takeCounters(words);
    return failures;
  }

  async insertBatch(batch: StagedBatch, assign: boolean): Promise<FailureReport> {
    const encoder = this.gpu.device.createCommandEncoder();
    this.failures.encodeReset(encoder, batch.n);
    this.gpu.submit([encoder.finish()]);
    await this.runInsertInto(this.store, batch.keys, batch.values as GPUBuffer, batch.n, assign);
    return this.refresh();
  }

  /**
   * Keys still contended after the rounds run again (inserts are idempotent). Keys that found no
   * room: without growth they are reported; with growth the table is rebuilt, at its size with a
   * new hash seed while the load leaves room (keys chosen to collide scatter), else twice as large.
   */
  async afterInsertFailures(report: FailureReport, attempt: number): Promise<'retry' | 'report'> {
    // Contended keys run again while that makes progress (keys all hashed to a few buckets are
    // placed one per bucket per round: growth, which reseeds, serves them better).
    if (attempt === 0) this.lastFailures = Number.POSITIVE_INFINITY;
    const progress = report.failed.length < this.lastFailures;
    this.lastFailures = report.failed.length;
    if (report.contended.length > 0 && attempt < 8 && progress) return 'retry';
    if (!this.growth || attempt >= 40) return 'report';
    const roomy = this.size + report.failed.length <= this.settings.maxLoadFactor * this.capacity;
    try {
      await this.rebuild(roomy && attempt % 2 === 0 ? this.capacity : this.capacity * 2, true);
    } catch (error) {
      if (error instanceof LimitExceededError || error instanceof CapacityError) return 'report';
      throw error;
    }
    return 'retry';
  }

  fits(incoming: number): boolean {
    return this.size + incoming <= this.settings.maxLoadFactor * this.capacity;
  }

  async makeRoom(incoming: number): Promise<void> {
    if (this.fits(incoming)) return;
    const needed = Math.ceil((this.size + incoming) / this.settings.maxLoadFactor);
    await this.rebuild(Math.max(this.capacity * 2, bucketCountFor(needed) * SLOTS), false);
  }

  async afterErase(): Promise<void> {}

  /**
   * Moves every live pair into a table of `capacity` slots (or more, doubling while some key finds
   * no room); `reseed` draws a new hash seed. The old table stays intact until the new one holds
   * every key.
   */
  async rebuild(capacity: number, reseed: boolean): Promise<void> {
    const old = this.store;
    const count = this.size;
    let seed = reseed ? nextSeed(old.seed, this.rehashes) : old.seed;
    const keys = this.gpu.createBuffer(4 * count, 'horton.rebuild.keys');
    const values = this.gpu.createBuffer(4 * count, 'horton.rebuild.values');
    const cursor = this.gpu.createBuffer(4, 'horton.rebuild.cursor');
    try {
      const encoder = this.gpu.device.createCommandEncoder();
      encoder.clearBuffer(cursor);
      this.encodeRetrieveFrom(encoder, old, keys, values, cursor);
      this.gpu.submit([encoder.finish()]);
      for (let target = capacity, attempt = 0; ; attempt++) {
        if (target > 2 ** 32 || attempt > 64) throw new CapacityError('horton: no capacity holds these keys');
        const next = this.allocate(bucketCountFor(target), seed);
        const build = this.gpu.device.createCommandEncoder();
        this.clearStore(build, next);
        this.failures.encodeReset(build, count);
        this.gpu.submit([build.finish()]);
        await this.runInsertInto(next, keys, values, count, false);
        const { words, failures } = await this.readReport(next.counters);
        if (failures.count === 0) {
          this.destroyStore(old);
          this.store = next;
          this.takeCounters(words);
          this.rehashes++;
          return;
        }
        this.destroyStore(next);
        // Contended keys: the same target again; keys with no room: a new seed, then twice the size.
        if (failures.contended.length < failures.failed.length || failures.truncated) {
          if (attempt % 2 === 1) target *= 2;
          seed = nextSeed(seed, this.rehashes + attempt + 1);
        }
      }
    } finally {
      keys.destroy();
      values.destroy();
      cursor.destroy();
    }
  }

  /** Runs the counting lookup over `n` keys: hits, misses and the buckets each read. */
  async countLookups(keys: GPUBuffer, n: number): Promise<LookupCounts> {
    const outValues = this.gpu.createBuffer(4 * n, 'horton.count.values');
    const outFound = this.gpu.createBuffer(4 * n, 'horton.count.found');
    const counts = this.gpu.createBuffer(16, 'horton.count.counts');
    try {
      const encoder = this.gpu.device.createCommandEncoder();
      encoder.clearBuffer(counts);
      countingFindKernel.variant({ mode: this.settings.mode }).encode(this.gpu, encoder, {
        buffers: { buckets_ro: this.store.buckets, keys, out_values: outValues, out_found: outFound, counts },
        params: this.params(this.store, n),
        invocations: n,
        maxWorkgroups: 65_535,
      });
      this.gpu.submit([encoder.finish()]);
      const [hits = 0, hitBuckets = 0, misses = 0, missBuckets = 0] = new Uint32Array(await this.gpu.readBytes(counts, 0, 16));
      return { hits, misses, hitBuckets, missBuckets };
    } finally {
      outValues.destroy();
      outFound.destroy();
      counts.destroy();
    }
  }

  /** [live keys, keys outside their primary bucket, Type B buckets], counted on the GPU. */
  async occupancy(): Promise<[number, number, number]> {
    const out = this.gpu.createBuffer(12, 'horton.stats');
    try {
      const encoder = this.gpu.device.createCommandEncoder();
      encoder.clearBuffer(out);
      statsKernel.variant({ mode: this.settings.mode }).encode(this.gpu, encoder, {
        buffers: { slots_ro: this.store.buckets, out },
        params: this.params(this.store, this.capacity),
        invocations: this.capacity,
        maxWorkgroups: TALLY_WORKGROUPS,
      });
      this.gpu.submit([encoder.finish()]);
      const [live = 0, away = 0, typeB = 0] = new Uint32Array(await this.gpu.readBytes(out, 0, 12));
      return [live, away, typeB];
    } finally {
      out.destroy();
    }
  }

  /** The raw bucket words (16 per bucket), for inspection. */
  async bucketWords(): Promise<Uint32Array> {
    return new Uint32Array(await this.gpu.readBytes(this.store.buckets, 0, this.store.bucketCount * WORDS_PER_BUCKET * 4));
  }

  destroy(): void {
    this.destroyStore(this.store);
  }

  // ---- internals -----------------------------------------------------------------------------

  private params(s: Store, n: number): HortonParamValues {
    return { n, mask: s.bucketCount - 1, seed: s.seed, epoch: this.epoch, prio_bits: this.prioBits };
  }

  private allocate(bucketCount: number, seed: number): Store {
    const label = `horton.buckets (${bucketCount} buckets)`;
    const buckets = this.gpu.createBuffer(bucketCount * WORDS_PER_BUCKET * 4, label);
    try {
      const locks = this.gpu.createBuffer(bucketCount * 4, 'horton.locks');
      const counters = this.gpu.createBuffer(16, 'horton.counters');
      return { buckets, locks, counters, bucketCount, seed };
    } catch (error) {
      buckets.destroy();
      throw error;
    }
  }

  private destroyStore(s: Store): void {
    s.buckets.destroy();
    s.locks.destroy();
    s.counters.destroy();
  }

  private clearStore(encoder: GPUCommandEncoder, s: Store): void {
    this.gpu.encodeFill(encoder, s.buckets, EMPTY_KEY, s.bucketCount * WORDS_PER_BUCKET);
    encoder.clearBuffer(s.locks);
    encoder.clearBuffer(s.counters);
  }

  /**
   * The next epoch of ownership stamps for a pass over up to n keys: a stamp is (epoch, position),
   * with enough position bits for n; before the epoch would overflow its bits (or when the
   * position needs more), the stamps of `s` are cleared and epochs start again.
   */
  private nextEpoch(encoder: GPUCommandEncoder, s: Store, n: number): number {
    const bits = Math.max(MIN_PRIO_BITS, Math.ceil(Math.log2(n + 1)));
    if (bits > this.prioBits || this.epoch + 1 >= 2 ** (32 - this.prioBits)) {
      this.prioBits = Math.max(bits, this.prioBits);
      encoder.clearBuffer(s.locks);
      this.epoch = 0;
    }
    this.epoch += 1;
    return this.epoch;
  }

  /** Clears the ownership stamps of `s` (used for other counts meanwhile); epochs start again. */
  private restartStamps(encoder: GPUCommandEncoder, s: Store): void {
    encoder.clearBuffer(s.locks);
    this.epoch = 0;
  }

  /** Two queues of up to n batch indices (word 0 counts) and the indirect-dispatch arguments. */
  private queues(n: number): { a: GPUBuffer; b: GPUBuffer; args: GPUBuffer } {
    return {
      a: this.scratch.get('queue.a', 4 * (n + 1)),
      b: this.scratch.get('queue.b', 4 * (n + 1)),
      args: this.scratch.get('round.args', 16, BufferUsage.INDIRECT | STORAGE_USAGE),
    };
  }

  /**
   * An insert batch into store s: the lock-free fast pass, then locked rounds over the keys it
   * left (device-side: INSERT_ROUNDS; host-side: chunks until the queue is empty).
   */
  private encodeInsertInto(
    encoder: GPUCommandEncoder,
    s: Store,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    assign: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const run = this.startInsert(encoder, s, keys, values, n, assign, timestampWrites);
    this.encodeRounds(encoder, run, INSERT_ROUNDS, true, timestampWrites);
  }

  /** A host-side insert into store s: rounds in chunks, reading the queue's length back between them. */
  private async runInsertInto(s: Store, keys: GPUBuffer, values: GPUBuffer, n: number, assign: boolean): Promise<void> {
    let encoder = this.gpu.device.createCommandEncoder();
    const run = this.startInsert(encoder, s, keys, values, n, assign);
    for (let rounds = HOST_CHUNK; ; rounds += HOST_CHUNK) {
      const final = rounds >= HOST_ROUNDS;
      this.encodeRounds(encoder, run, HOST_CHUNK, final);
      this.gpu.submit([encoder.finish()]);
      if (final) return;
      const pending = new Uint32Array(await this.gpu.readBytes(run.queues[0], 0, 4))[0] as number;
      if (pending === 0) return;
      encoder = this.gpu.device.createCommandEncoder();
    }
  }

  /** The fast pass and the spill passes of an insert batch; the rounds take the queue it returns. */
  private startInsert(
    encoder: GPUCommandEncoder,
    s: Store,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    assign: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): InsertRun {
    const run = this.encodeFirstPass(encoder, s, keys, values, n, assign, timestampWrites);
    this.encodeSpillPasses(encoder, run);
    return run;
  }

  /** The bulk build when `useBulk` says so, else the fast pass. */
  private encodeFirstPass(
    encoder: GPUCommandEncoder,
    s: Store,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    assign: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
    stage?: StageMarker,
  ): InsertRun {
    return this.useBulk(s, n)
      ? this.encodeBulkBuild(encoder, s, keys, values, n, assign, timestampWrites, stage)
      : this.encodeFastPass(encoder, s, keys, values, n, assign, timestampWrites);
  }

  /**
   * Whether an insert batch of n keys into store s takes the bulk build (wgsl/bulk.ts): Horton mode,
   * batches of at least BULK_MIN_SHARE of the slots ('auto'), records within one binding.
   */
  private useBulk(s: Store, n: number): boolean {
    const mode = this.settings.bulkInsert;
    if (this.settings.mode !== 'horton' || mode === 'never' || n === 0) return false;
    const limits = this.gpu.limits;
    if (n * BULK_RECORD_BYTES > Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize)) return false;
    return mode === 'always' || n >= BULK_MIN_SHARE * s.bucketCount * SLOTS;
  }

  /** The bulk build's scratch: region counts and cursors, the records, the room hints. */
  private bulkScratch(s: Store, n: number) {
    const regions = Math.ceil(s.bucketCount / REGION_BUCKETS);
    return {
      regions,
      bucketCounts: this.scratch.get('bulk.bucket-counts', 4 * Math.ceil(s.bucketCount / 4)),
      counts: this.scratch.get('bulk.counts', 4 * regions),
      cursors: this.scratch.get('bulk.cursors', 4 * regions),
      records: this.scratch.get('bulk.records', BULK_RECORD_BYTES * n),
      hints: this.scratch.get('bulk.hints', 4 * Math.ceil(s.bucketCount / 4)),
    };
  }

  /** The bulk build's partition and region pass (see bulk.ts); the keys it spills go to the returned queue. */
  private encodeBulkBuild(
    encoder: GPUCommandEncoder,
    s: Store,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    assign: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
    stage: StageMarker = unstaged,
  ): InsertRun {
    const q = this.queues(n);
    const { regions, bucketCounts, counts, cursors, records, hints } = this.bulkScratch(s, n);
    const words = Math.ceil(s.bucketCount / 4);
    encoder.clearBuffer(q.a, 0, 4);
    encoder.clearBuffer(q.b, 0, 4);
    encoder.clearBuffer(counts, 0, 4 * regions);
    const params = this.params(s, n);
    const plan = this.size + n > PLAN_FROM_LOAD * s.bucketCount * SLOTS;
    const { first } = timestampEnds(timestampWrites);
    if (plan) encoder.clearBuffer(bucketCounts, 0, 4 * words);
    stage('bulk.count', () =>
      bulkCountKernel.variant({ perBucket: plan }).encode(this.gpu, encoder, {
        buffers: { keys, counts, ...(plan ? { bucket_counts: bucketCounts } : {}) } as never,
        params,
        invocations: n,
        maxWorkgroups: 65_535,
        timestampWrites: first,
      }),
    );
    if (plan) {
      // The room bytes are written over the count bytes; the build reads them and writes the hints.
      stage('bulk.room', () =>
        bulkRoomKernel.variant().encode(this.gpu, encoder, {
          buffers: { bucket_words: s.buckets, room: bucketCounts },
          params: this.params(s, words),
          invocations: words,
          maxWorkgroups: 65_535,
        }),
      );
    }
    stage('bulk.scan', () => encodeExclusiveScan(this.gpu, encoder, counts, cursors, regions));
    stage('bulk.scatter', () =>
      bulkScatterKernel.variant().encode(this.gpu, encoder, {
        buffers: { keys, values, cursors, records, failed: this.failures.buffer },
        params,
        invocations: n,
        maxWorkgroups: 65_535,
      }),
    );
    stage('bulk.build', () =>
      bulkBuildKernel.variant({ assign, plan }).encode(this.gpu, encoder, {
        buffers: {
          slots: s.buckets,
          records,
          ends: cursors,
          queue_out: q.a,
          counters: s.counters,
          hints,
          ...(plan ? { room: bucketCounts } : {}),
        } as never,
        params: this.params(s, regions),
        // One workgroup per region.
        invocations: regions * WORKGROUP_SIZE,
        maxWorkgroups: 65_535,
      }),
    );
    return { s, keys, values, n, assign, queues: [q.a, q.b], args: q.args, rounds: 0, hints };
  }

  /** The lock-free fast pass (see insert.ts); keys it leaves go to the returned queue. */
  private encodeFastPass(
    encoder: GPUCommandEncoder,
    s: Store,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    assign: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): InsertRun {
    const q = this.queues(n);
    encoder.clearBuffer(q.a, 0, 4);
    encoder.clearBuffer(q.b, 0, 4);
    const mode = this.settings.mode;
    const horton = mode === 'horton';
    // Horton's spill counts live in the ownership stamps until the rounds begin.
    if (horton) encoder.clearBuffer(s.locks);
    fastInsertKernel.variant({ mode, assign }).encode(this.gpu, encoder, {
      buffers: {
        buckets: s.buckets,
        keys,
        values,
        queue_out: q.a,
        counters: s.counters,
        failed: this.failures.buffer,
        ...(horton ? { spill: s.locks } : {}),
      } as never,
      params: this.params(s, n),
      invocations: n,
      maxWorkgroups: TALLY_WORKGROUPS,
      timestampWrites: timestampEnds(timestampWrites).first,
    });
    return { s, keys, values, n, assign, queues: [q.a, q.b], args: q.args, rounds: 0 };
  }

  /** The lock-free passes over the keys the fast pass left (see spill.ts), then fresh stamps for the rounds. */
  private encodeSpillPasses(encoder: GPUCommandEncoder, run: InsertRun, stage: StageMarker = unstaged): void {
    const { s, keys, values } = run;
    const horton = this.settings.mode === 'horton';
    const hinted = run.hints !== undefined;
    const place = [false, true].map((repoint) => spillPlaceKernel.variant({ assign: run.assign, repoint, hinted }));
    // After the bulk build, slot 7 and the conversions are settled: the placement passes only.
    const passes = horton
      ? [...(hinted ? [] : [spillSlotKernel.variant({ assign: run.assign })]), ...place]
      : [bchtSecondKernel.variant({ assign: run.assign })];
    for (const [p, kernel] of passes.entries()) {
      const [qin, qout] = run.queues;
      stage(`spill.${p + 1}`, () => {
        roundArgsKernel
          .variant({ maxWorkgroups: SPILL_MAX_WORKGROUPS })
          .encode(this.gpu, encoder, { buffers: { queue_in: qin, queue_out: qout, args: run.args }, invocations: 1 });
        kernel.encode(this.gpu, encoder, {
          buffers: {
            buckets: s.buckets,
            keys,
            values,
            queue_in: qin,
            queue_out: qout,
            counters: s.counters,
            ...(horton && !hinted && p === 0 ? { spill: s.locks } : {}),
            ...(hinted ? { hints: run.hints } : {}),
          } as never,
          params: this.params(s, 0),
          indirect: { buffer: run.args, offset: 0 },
        });
      });
      run.queues = [qout, qin];
    }
    if (horton && !hinted) this.restartStamps(encoder, s);
  }

  /**
   * An insert batch (from an empty or filled table) stage by stage, each in its own submission:
   * wall-clock ms of each (a GPU idle between them; for benchmarks' breakdowns, not for rates) and
   * the keys queued after it. Stages: fast pass, spill passes, then rounds in chunks of 8.
   */
  async profileInsert(keys: GPUBuffer, values: GPUBuffer, n: number): Promise<Array<{ stage: string; ms: number; queued: number }>> {
    const out: Array<{ stage: string; ms: number; queued: number }> = [];
    // Each stage in its own submission; the queue read afterwards is the one the stage returns.
    const step = async (stage: string, encode: (encoder: GPUCommandEncoder) => InsertRun | undefined): Promise<InsertRun | undefined> => {
      const encoder = this.gpu.device.createCommandEncoder();
      const run = encode(encoder);
      const t0 = performance.now();
      this.gpu.submit([encoder.finish()]);
      await this.gpu.finish();
      const ms = performance.now() - t0;
      const queued = run ? (new Uint32Array(await this.gpu.readBytes(run.queues[0], 0, 4))[0] as number) : 0;
      out.push({ stage, ms, queued });
      return run;
    };
    await step('reset', (e) => {
      this.failures.encodeReset(e, n);
      return undefined;
    });
    const first = this.useBulk(this.store, n) ? 'bulk' : 'fast';
    const r = (await step(first, (e) => this.encodeFirstPass(e, this.store, keys, values, n, false))) as InsertRun;
    await step('spill', (e) => {
      this.encodeSpillPasses(e, r);
      return r;
    });
    for (let done = 0; done < INSERT_ROUNDS; done += 8) {
      await step(`rounds ${done + 1}-${done + 8}`, (e) => {
        this.encodeRounds(e, r, 8, done + 8 >= INSERT_ROUNDS);
        return r;
      });
    }
    await this.refresh();
    return out;
  }

  /**
   * One submission of an insert batch cut short: the fast pass, then the spill passes when `spill`,
   * then `rounds` locked rounds. Wall-clock ms from submit to completion and the keys left queued:
   * successive cuts from an empty table say where one submission's time goes (profileInsert's
   * stages, each a submission of its own, also count the GPU's idle clock between them).
   */
  async profileCut(
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    spill: boolean,
    rounds: number,
    prelude?: (encoder: GPUCommandEncoder) => void,
  ): Promise<{ ms: number; gpuMs: number; queued: number }> {
    const timer = this.gpu.createTimer(2);
    const slot = timer.slot('cut');
    const encoder = this.gpu.device.createCommandEncoder();
    // E.g. work that brings the GPU's clock back up after the idle gap before the cut.
    prelude?.(encoder);
    this.failures.encodeReset(encoder, n);
    let run: InsertRun | undefined;
    encodeTimedSpan(encoder, slot, () => {
      run = this.encodeFirstPass(encoder, this.store, keys, values, n, false);
      if (spill) this.encodeSpillPasses(encoder, run);
      if (rounds > 0) this.encodeRounds(encoder, run, rounds, true);
    });
    timer.resolve(encoder);
    await this.gpu.finish();
    const t0 = performance.now();
    this.gpu.submit([encoder.finish()]);
    timer.submitted();
    await this.gpu.finish();
    const ms = performance.now() - t0;
    const gpuMs = (await timer.read()).passes[0]?.ms ?? Number.NaN;
    timer.destroy();
    const queued = new Uint32Array(await this.gpu.readBytes((run as InsertRun).queues[0], 0, 4))[0] as number;
    await this.refresh();
    return { ms, gpuMs, queued };
  }

  /**
   * One submission of a whole insert batch with a GPU timestamp pair around the first pass, the
   * spill passes and every round, and the keys queued before each round: where the rounds'
   * time goes, round by round.
   */
  async profileRounds(
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    prelude?: (encoder: GPUCommandEncoder) => void,
  ): Promise<{ stages: Array<{ stage: string; gpuMs: number; queued: number }>; samples: Uint32Array[] }> {
    // The first pass and its bulk-build parts, the spill stage and its passes, every round.
    const timer = this.gpu.createTimer(INSERT_ROUNDS + 12);
    // The first SAMPLE entries of the queue before each of the first SAMPLED rounds (batch
    // indices, strikes in the top two bits).
    const SAMPLE = 65536;
    const SAMPLED = 8;
    const sampled = this.gpu.pool.acquire(4 * SAMPLE * SAMPLED, BufferUsage.COPY_SRC | BufferUsage.COPY_DST, 'horton.trace.sample');
    const queued = this.gpu.pool.acquire(4 * (INSERT_ROUNDS + 2), BufferUsage.COPY_SRC | BufferUsage.COPY_DST, 'horton.trace');
    const encoder = this.gpu.device.createCommandEncoder();
    prelude?.(encoder);
    this.failures.encodeReset(encoder, n);
    const mark = (label: string, stage: () => void): void => encodeTimedSpan(encoder, timer.slot(label), stage);
    let run: InsertRun | undefined;
    mark('first', () => {
      // A bulk build's passes are timed one by one inside the first stage.
      run = this.encodeFirstPass(encoder, this.store, keys, values, n, false, undefined, mark);
    });
    const r = run as InsertRun;
    encoder.copyBufferToBuffer(r.queues[0], 0, queued, 0, 4);
    mark('spill', () => this.encodeSpillPasses(encoder, r, mark));
    for (let k = 0; k < INSERT_ROUNDS; k++) {
      encoder.copyBufferToBuffer(r.queues[0], 0, queued, 4 * (k + 1), 4);
      if (k < SAMPLED) encoder.copyBufferToBuffer(r.queues[0], 4, sampled, 4 * SAMPLE * k, 4 * Math.min(SAMPLE, n));
      mark(`round ${k + 1}`, () => this.encodeRounds(encoder, r, 1, k === INSERT_ROUNDS - 1));
    }
    encoder.copyBufferToBuffer(r.queues[0], 0, queued, 4 * (INSERT_ROUNDS + 1), 4);
    timer.resolve(encoder);
    await this.gpu.finish();
    this.gpu.submit([encoder.finish()]);
    timer.submitted();
    const passes = (await timer.read()).passes;
    timer.destroy();
    const q = new Uint32Array(await this.gpu.readBytes(queued, 0, 4 * (INSERT_ROUNDS + 2)));
    this.gpu.pool.release(queued);
    const all = new Uint32Array(await this.gpu.readBytes(sampled, 0, 4 * SAMPLE * SAMPLED));
    this.gpu.pool.release(sampled);
    const samples = [...Array(SAMPLED).keys()].map((k) =>
      all.slice(SAMPLE * k, SAMPLE * k + Math.min(SAMPLE, q[k + 1] as number)).map((e) => e & 0x3fffffff),
    );
    await this.refresh();
    // A stage's queued count is the queue it starts from (the first pass and its parts: the batch).
    const queuedBefore = (label: string): number =>
      label === 'spill' || label === 'spill.1' ? (q[0] as number) : label.startsWith('round ') ? (q[Number(label.slice(6))] as number) : n;
    const stages = passes.map((p) => ({ stage: p.label, gpuMs: p.ms, queued: queuedBefore(p.label) }));
    return { stages, samples };
  }

  /** `rounds` locked rounds (each: grid, planning pass, executing pass); `final`: the last reports what is still contended. */
  private encodeRounds(
    encoder: GPUCommandEncoder,
    run: InsertRun,
    rounds: number,
    final: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const { s, keys, values } = run;
    const mode = this.settings.mode;
    // A bit per queue position: its key's planning pass found no room (insert.ts).
    const planned = this.scratch.get('round.planned', 4 * Math.ceil((run.n + 1) / 32));
    for (let r = 0; r < rounds; r++) {
      const [qin, qout] = run.queues;
      const last = final && r === rounds - 1;
      // A key with no room is not struck in a batch's first rounds, while the moves of the
      // others still open room (at load 0.9 of 2^27, one of 120.8 million keys was struck out
      // now and then in the first 8).
      const strikes = run.n < STRIKE_FREE_FROM || run.rounds >= STRIKE_FREE_ROUNDS;
      run.rounds += 1;
      this.nextEpoch(encoder, s, run.n);
      roundArgsKernel.variant().encode(this.gpu, encoder, { buffers: { queue_in: qin, queue_out: qout, args: run.args }, invocations: 1 });
      for (const plan of [true, false]) {
        // After a bulk build the rounds rank candidates by its room bytes (insert.ts, `hinted`).
        insertRoundKernel.variant({ mode, assign: run.assign, hinted: run.hints !== undefined }).encode(this.gpu, encoder, {
          buffers: {
            buckets: s.buckets,
            locks: s.locks,
            keys,
            values,
            queue_in: qin,
            queue_out: qout,
            counters: s.counters,
            failed: this.failures.buffer,
            planned,
            ...(run.hints ? { hints: run.hints } : {}),
          } as never,
          params: { ...this.params(s, 0), flags: (plan ? 1 : 0) | (last ? 2 : 0) | (strikes ? 4 : 0) },
          indirect: { buffer: run.args, offset: 0 },
          timestampWrites: last && !plan ? timestampEnds(timestampWrites).last : undefined,
        });
      }
      run.queues = [qout, qin];
    }
  }

  private encodeRetrieveFrom(encoder: GPUCommandEncoder, s: Store, outKeys: GPUBuffer, outValues: GPUBuffer, cursor: GPUBuffer): void {
    const slots = s.bucketCount * SLOTS;
    retrieveKernel.variant().encode(this.gpu, encoder, {
      buffers: { slots_ro: s.buckets, out_keys: outKeys, out_values: outValues, cursor },
      params: this.params(s, slots),
      invocations: slots,
      maxWorkgroups: 4096,
    });
  }

  /** The host's copies of the counters a report read (live keys, Type B buckets, pushes). */
  private takeCounters(words: Uint32Array): void {
    this.size = words[0] as number;
    this.typeB = words[1] as number;
    this.pushes = words[2] as number;
  }

  /** Reads a counters buffer (live keys, Type B buckets, pushes) and the failed list in one round trip. */
  private async readReport(counters: GPUBuffer): Promise<{ words: Uint32Array; failures: FailureReport }> {
    const report = this.gpu.pool.acquire(32, BufferUsage.COPY_SRC | BufferUsage.COPY_DST, 'horton.report');
    const encoder = this.gpu.device.createCommandEncoder();
    encoder.copyBufferToBuffer(counters, 0, report, 0, 16);
    encoder.copyBufferToBuffer(this.failures.buffer, 0, report, 16, 4);
    this.gpu.submit([encoder.finish()]);
    const words = new Uint32Array(await this.gpu.readBytes(report, 0, 20));
    this.gpu.pool.release(report);
    const failures = await this.failures.read(this.gpu, words[4] as number);
    return { words, failures };
  }
}

/** The next hash seed: a fixed sequence (runs are reproducible), never 0 after a reseed. */
function nextSeed(seed: number, salt: number): number {
  let h = (seed ^ Math.imul(salt + 1, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0 || 1;
}
