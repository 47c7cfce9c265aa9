import {
  type Binding,
  type BindingsLayout,
  BufferUsage,
  CapacityError,
  type DefinedKernel,
  type DictionaryEngine,
  type EncodeInsertOptions,
  type EncodeOptions,
  encodeExclusiveScan,
  encodeOrderedFind,
  encodeWindowOrder,
  FailureList,
  type FailureReport,
  type Gpu,
  type KeySpec,
  type KeyType,
  LimitExceededError,
  type OrderDispatch,
  ordersByWindow,
  ScratchArena,
  type StagedApply,
  type StagedBatch,
  timestampEnds,
  u32KeySpec,
  u64KeySpec,
  wordRange,
} from '@gpuhash/core';
import { BUSY_KEY } from './sentinels';
import type { LinearProbeInsertOptions } from './types';
import { bulkBuildKernel, bulkCountKernel, bulkScatterKernel, ONE_PAIR_WINDOW, type PairWindows, REGION_SLOTS } from './wgsl/bulk';
import {
  applyKernel,
  COOP_FROM_LOAD,
  COOP_PROBE_AHEAD,
  COOP_TILE,
  eraseKernel,
  findKernel,
  insertKernel,
  PAIRS_AHEAD,
  PRIVATE_INSERT_STEPS,
  PRIVATE_STEPS,
  PROBE_AHEAD,
  rehashKernel,
  retrieveKernel,
  spillInsertKernel,
} from './wgsl/kernels';
import { keyLayout } from './wgsl/key-layouts';
import type { KeyLayout } from './wgsl/layout';
import type { LinearProbeParams, LinearProbeParamValues } from './wgsl/params';
import { windowCountKernel, windowGatherKernel, windowScatterKernel } from './wgsl/window-order';
import { ONE_WINDOW, type SlotWindows } from './wgsl/windows';

/**
 * Bindings a bulk pass's grouped pairs may span: with 2, a part of a batch is 2^28 keys on the GPU
 * hosts, so a build from the bench's key buffers (2^28 keys each) loads and stores every region
 * once per buffer, not twice.
 */
const BULK_PAIR_WINDOWS = 2;
/** Tables of at most this many slots insert on the atomic path ('auto'): see useBulk. */
const BULK_MIN_CAPACITY = 2 ** 24;
export const MIN_CAPACITY = 64;
/**
 * Kernels that tally (insert, erase, apply, rehash) flush one global atomic per workgroup; capping
 * the grid (the kernels grid-stride) keeps that to a few thousand atomics however large the batch.
 */
const TALLY_WORKGROUPS = 16_384;

export function nextPow2(n: number): number {
  let c = MIN_CAPACITY;
  while (c < n) c *= 2;
  return c;
}

export interface LinearProbeSettings {
  keyType: KeyType;
  maxLoadFactor: number;
  growth: boolean;
  maxProbes: number;
  bulkInsert: 'auto' | 'always' | 'never';
  /**
   * Test-only: tables of at least 64 x `windows` slots are split into this many windows, whatever
   * the device binds whole (so small tables exercise the windowed kernels).
   */
  windows?: number;
  /** Test-only: grouped pairs per binding of a bulk pass (fewer than a binding holds). */
  bulkPairWindow?: number;
  /** Test-only: whether finds take the batch in window order (see ordersFinds). */
  windowOrder?: 'auto' | 'always' | 'never';
}

/**
 * Storage bindings an apply pass binds besides the slot windows (ops, keys, values, out, counters,
 * failed): the kernel that binds the most, so it sets how many windows a table may span.
 */
const OTHER_BINDINGS = 6;

/**
 * The linear-probing table's storage and kernels behind the dictionary contract: the slots
 * (u32 keys: key, value; u64 keys: tag, lo, hi, value) in one buffer, or in windows of
 * `windowSlots` slots when the table is larger than one storage binding (wgsl/windows.ts), device
 * counters (live keys, tombstones), a failed list, and growth by rebuilding into a larger table
 * (or, for colliding keys, the same size with a new hash seed).
 */
export class LinearProbeEngine<K extends KeyType> implements DictionaryEngine<K> {
  readonly keySpec: KeySpec<K>;
  readonly scratch: ScratchArena;
  readonly layout: KeyLayout;
  private slots: GPUBuffer[];
  /** Slots the device binds whole (a power of two); a larger table is split into windows of this many. */
  private readonly bindingSlots: number;
  private readonly counters: GPUBuffer;
  private readonly failures: FailureList;
  capacity: number;
  size = 0;
  tombstones = 0;
  rehashes = 0;
  /** Hash seed of the current layout (a rebuild for colliding keys draws a new one). */
  seed = 0;
  /**
   * How probes are walked (wgsl/kernels.ts): slots an insert reads ahead (`coopAhead` when its
   * subgroup takes the rest), slot pairs a lookup reads ahead, and whether long probes are walked
   * by `coopTile` lanes of a subgroup (`coop`, in batches past load `coopFromLoad`, after
   * `privateSteps` lookup steps or `privateInsertSteps` insert read-aheads alone).
   * tools/gpu-check's perf-insert compares settings.
   */
  readonly probing: {
    ahead: number;
    coopAhead: number;
    pairsAhead: number;
    coop: boolean;
    coopFromLoad: number;
    privateSteps: number;
    privateInsertSteps: number;
    coopTile: number;
  };

  constructor(
    private readonly gpu: Gpu,
    capacity: number,
    readonly settings: LinearProbeSettings,
  ) {
    this.layout = keyLayout(settings.keyType);
    this.keySpec = (settings.keyType === 'u64' ? u64KeySpec() : u32KeySpec(BUSY_KEY, 'empty, tombstone and busy')) as KeySpec<K>;
    this.scratch = new ScratchArena(gpu, 'linear-probe');
    this.capacity = capacity;
    this.bindingSlots = gpu.bindingElements(4 * this.layout.wordsPerSlot);
    this.slots = this.allocateSlots(capacity);
    this.counters = gpu.createBuffer(16, 'linear-probe.counters');
    this.failures = new FailureList(this.scratch);
    this.probing = {
      ahead: PROBE_AHEAD,
      coopAhead: COOP_PROBE_AHEAD,
      pairsAhead: PAIRS_AHEAD,
      coop: gpu.subgroups.supported,
      coopFromLoad: COOP_FROM_LOAD,
      privateSteps: PRIVATE_STEPS,
      privateInsertSteps: PRIVATE_INSERT_STEPS,
      coopTile: COOP_TILE,
    };
  }

  get growth(): boolean {
    return this.settings.growth;
  }

  /** The probe bound in force (the option, capped at the capacity). */
  get maxProbes(): number {
    return Math.min(this.settings.maxProbes, this.capacity);
  }

  /** The slot windows, in slot order (one buffer for a table within one binding). */
  get slotsBuffers(): readonly GPUBuffer[] {
    return this.slots;
  }

  /** The slot array as kernels bind it: one buffer, or the list of windows. */
  get slotsBinding(): GPUBuffer | readonly GPUBuffer[] {
    return this.slots.length === 1 ? (this.slots[0] as GPUBuffer) : this.slots;
  }

  /** Slots per buffer of slotsBuffers. */
  get windowSlots(): number {
    return this.capacity / this.slots.length;
  }

  /** The variant fields that say how kernels bind the slots (wgsl/windows.ts). */
  get windowing(): SlotWindows {
    return this.windowsFor(this.capacity);
  }

  // ---- device-side API -----------------------------------------------------------------------

  encodeClear(encoder: GPUCommandEncoder): void {
    this.encodeFillSlots(encoder, this.slots, this.capacity);
    encoder.clearBuffer(this.counters);
    this.size = 0;
    this.tombstones = 0;
  }

  /** Large batches into u32 tables without tombstones take the partitioned bulk path (wgsl/bulk.ts). */
  encodeInsert(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    options: EncodeInsertOptions & LinearProbeInsertOptions = {},
  ): 'bulk' | 'atomic' {
    this.failures.encodeReset(encoder, n);
    const assign = options.assign ?? false;
    if (this.useBulk(n, options.bulk ?? this.settings.bulkInsert)) {
      this.encodeBulkInsert(encoder, keys, values, n, assign, options.timestampWrites);
      return 'bulk';
    }
    // Long probes walked by the subgroup when the batch takes the table past coopFromLoad.
    const coop = this.probing.coop && this.size + n > this.probing.coopFromLoad * this.capacity;
    const kernel = insertKernel.variant({
      layout: this.layout.name,
      assign,
      reuseTombs: this.tombstones > 0,
      blindCas: options.blindCas,
      ahead: coop ? this.probing.coopAhead : this.probing.ahead,
      coop,
      subgroups: this.probing.coop,
      privateSteps: this.probing.privateInsertSteps,
      coopTile: this.probing.coopTile,
      ...this.windowing,
    });
    this.dispatch(
      encoder,
      kernel,
      n,
      { slots: this.slotsBinding, keys, values, counters: this.counters, failed: this.failures.buffer },
      { maxWorkgroups: TALLY_WORKGROUPS, timestampWrites: options.timestampWrites },
    );
    return 'atomic';
  }

  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const buffers = { slots_ro: this.slotsBinding, keys, out_values: outValues, out_found: outFound };
    const { pairsAhead, privateSteps, coopTile } = this.probing;
    const coop = this.probing.coop && this.size > this.probing.coopFromLoad * this.capacity;
    const ordered = this.ordersFinds(n);
    const kernel = findKernel.variant({
      layout: this.layout.name,
      pairsAhead,
      coop,
      subgroups: coop,
      privateSteps,
      coopTile,
      ordered,
      ...this.windowing,
    });
    if (!ordered) {
      this.dispatch(encoder, kernel, n, buffers as typeof buffers & { order: GPUBuffer }, { timestampWrites });
      return;
    }
    encodeOrderedFind(
      this.gpu,
      encoder,
      n,
      this.windowing.windows,
      this.scratch,
      { values: outValues, found: outFound },
      {
        order: this.orderDispatch(encoder, keys, n),
        find: (listed, order) => this.dispatch(encoder, kernel, n, { ...buffers, ...listed, order }),
        gather: (gather, timestampWrites) => this.dispatch(encoder, windowGatherKernel.variant(), n, gather, { timestampWrites }),
      },
      timestampWrites,
    );
  }

  /** Whether a find of `n` keys takes its batch in window order (wgsl/window-order.ts). */
  private ordersFinds(n: number): boolean {
    // Inserts keep batch order: in window order, atomic-path inserts ran 12% faster at 2^29 slots
    // and 15-19% slower at 2^30 on an H100.
    const bytes = this.capacity * 4 * this.layout.wordsPerSlot;
    return ordersByWindow(this.settings.windowOrder ?? 'auto', this.windowing.windows, n, bytes);
  }

  /**
   * @internal The order's passes alone (tools/gpu-check's perf-window-order times them): the
   * batch's indices window by window, in scratch buffers (`order`, and `positions` for the gather).
   */
  encodeWindowOrder(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): { order: GPUBuffer; positions: GPUBuffer } {
    return encodeWindowOrder(
      this.gpu,
      encoder,
      n,
      this.windowing.windows,
      this.scratch,
      this.orderDispatch(encoder, keys, n),
      timestampWrites,
    );
  }

  /** The order's count and scatter passes over a batch of `n` keys, as core's window order dispatches them. */
  private orderDispatch(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number): OrderDispatch {
    const variant = { layout: this.layout.name, ...this.windowing };
    const count = windowCountKernel.variant(variant);
    const scatter = windowScatterKernel.variant(variant);
    return (p, options) =>
      p.pass === 'count'
        ? this.dispatch(encoder, count, n, { keys, ...p.buffers }, options)
        : this.dispatch(encoder, scatter, n, { keys, ...p.buffers }, options);
  }

  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.failures.encodeReset(encoder, n);
    const buffers = { slots: this.slotsBinding, keys, counters: this.counters, failed: this.failures.buffer };
    this.dispatch(encoder, eraseKernel.variant({ layout: this.layout.name, ...this.windowing }), n, buffers, {
      maxWorkgroups: TALLY_WORKGROUPS,
      timestampWrites,
    });
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
    const buffers = { slots: this.slotsBinding, ops, keys, values, out, counters: this.counters, failed: this.failures.buffer };
    this.dispatch(encoder, applyKernel.variant({ layout: this.layout.name, ...this.windowing }), n, buffers, {
      maxWorkgroups: TALLY_WORKGROUPS,
      timestampWrites,
    });
  }

  encodeRetrieve(encoder: GPUCommandEncoder, outKeys: GPUBuffer, outValues: GPUBuffer, cursor: GPUBuffer): void {
    const buffers = { slots_ro: this.slotsBinding, out_keys: outKeys, out_values: outValues, cursor };
    const kernel = retrieveKernel.variant({ layout: this.layout.name, ...this.windowing });
    this.dispatch(encoder, kernel, this.capacity, buffers, { maxWorkgroups: 4096 });
  }

  reserveBatch(n: number): void {
    this.failures.reserve(n);
    if (this.useBulk(n, this.settings.bulkInsert)) this.bulkScratch(Math.min(n, this.bulkPart));
  }

  // ---- host-operation steps ------------------------------------------------------------------

  async refresh(): Promise<FailureReport> {
    const { words, failures } = await this.readReport(this.counters);
    this.size = words[0] as number;
    this.tombstones = words[1] as number;
    return failures;
  }

  async insertBatch(batch: StagedBatch, assign: boolean): Promise<FailureReport> {
    const encoder = this.gpu.device.createCommandEncoder();
    const path = this.encodeInsert(encoder, batch.keys, batch.values as GPUBuffer, batch.n, { assign });
    this.gpu.submit([encoder.finish()]);
    const report = await this.refresh();
    if (path === 'atomic' || report.failed.length === 0) return report;
    // The bulk path reports pair positions, not batch indices: the (idempotent) batch runs again on
    // the atomic path, which names the batch indices of the keys that still do not fit.
    const again = this.gpu.device.createCommandEncoder();
    this.encodeInsert(again, batch.keys, batch.values as GPUBuffer, batch.n, { assign, bulk: 'never' });
    this.gpu.submit([again.finish()]);
    return this.refresh();
  }

  async applyBatch(batch: StagedApply, out: GPUBuffer): Promise<FailureReport> {
    const encoder = this.gpu.device.createCommandEncoder();
    this.encodeApply(encoder, batch.ops, batch.keys, batch.values, batch.n, out);
    this.gpu.submit([encoder.finish()]);
    return this.refresh();
  }

  /**
   * Keys that found no slot within the probe bound. While the load leaves room, they collide (a
   * cluster longer than maxProbes): the table is rebuilt at its size with a new hash seed, which
   * scatters keys chosen to collide. Otherwise it doubles. The batch then runs again.
   */
  async afterInsertFailures(report: FailureReport, attempt: number): Promise<'retry' | 'report'> {
    if (!this.growth || attempt >= 40) return 'report';
    const roomy = this.size + this.tombstones + report.failed.length <= this.settings.maxLoadFactor * this.capacity;
    try {
      await this.rebuild(roomy && attempt % 2 === 0 ? this.capacity : this.capacity * 2, true);
    } catch (error) {
      // At the device's storage limit the keys that do not fit are reported, never dropped.
      if (error instanceof LimitExceededError || error instanceof CapacityError) return 'report';
      throw error;
    }
    return 'retry';
  }

  fits(incoming: number): boolean {
    return this.size + this.tombstones + incoming <= this.settings.maxLoadFactor * this.capacity;
  }

  /**
   * Before a batch of up to `incoming` new keys: when keys plus tombstones would pass the load
   * limit, rebuild, growing only if the live keys need it (a rebuild at the same size just drops
   * the tombstones that erases and mixed batches leave behind).
   */
  async makeRoom(incoming: number): Promise<void> {
    if (this.fits(incoming)) return;
    const limit = this.settings.maxLoadFactor * this.capacity;
    const needed = this.size + incoming;
    const target = needed <= limit ? this.capacity : Math.max(this.capacity * 2, nextPow2(Math.ceil(needed / this.settings.maxLoadFactor)));
    await this.rebuild(target, false);
  }

  async afterErase(): Promise<void> {}

  /**
   * Moves every live pair into a new table of `capacity` slots (or more: a target where some key
   * finds no slot within the probe bound doubles), dropping tombstones; `reseed` draws a new hash
   * seed. The old table stays intact until the new one holds every key.
   */
  async rebuild(capacity: number, reseed: boolean): Promise<void> {
    const seed = reseed ? nextSeed(this.seed, this.rehashes) : this.seed;
    for (let target = capacity; ; target *= 2) {
      const slots = this.allocateSlots(target);
      // The new table counts into its own counters, so a failed attempt leaves this one intact.
      const counters = this.gpu.pool.acquire(
        16,
        BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST,
        'linear-probe.rehash.counters',
      );
      const encoder = this.gpu.device.createCommandEncoder();
      this.encodeFillSlots(encoder, slots, target);
      encoder.clearBuffer(counters, 0, 16);
      // Only the count matters here: the list keeps what indices fit.
      this.failures.encodeReset(encoder, 0);
      const rehash = rehashKernel.variant({ layout: this.layout.name, ...this.windowsFor(target) });
      // One dispatch per old window, so the pass binds the new table's windows and one old one.
      const oldWindowSlots = this.windowSlots;
      for (const old of this.slots) {
        rehash.encode(this.gpu, encoder, {
          buffers: { slots: slots.length === 1 ? (slots[0] as GPUBuffer) : slots, old_slots: old, counters, failed: this.failures.buffer },
          params: this.params(oldWindowSlots, target - 1, Math.min(this.settings.maxProbes, target), seed),
          invocations: oldWindowSlots,
          maxWorkgroups: TALLY_WORKGROUPS,
        });
      }
      this.gpu.submit([encoder.finish()]);
      const { words, failures } = await this.readReport(counters, false);
      if (failures.count === 0) {
        const commit = this.gpu.device.createCommandEncoder();
        commit.copyBufferToBuffer(counters, 0, this.counters, 0, 16);
        this.gpu.submit([commit.finish()]);
        this.gpu.pool.release(counters);
        for (const window of this.slots) window.destroy();
        this.slots = slots;
        this.capacity = target;
        this.seed = seed;
        this.size = words[0] as number;
        this.tombstones = 0;
        this.rehashes++;
        return;
      }
      this.gpu.pool.release(counters);
      for (const window of slots) window.destroy();
      // Some key had no room within the probe bound: a larger table (allocateSlots throws
      // LimitExceededError past the device's limits).
      if (target >= 2 ** 31)
        throw new CapacityError(
          `linear-probe: no capacity holds these keys within maxProbes (${this.settings.maxProbes}); raise maxProbes`,
        );
    }
  }

  destroy(): void {
    for (const window of this.slots) window.destroy();
    this.counters.destroy();
  }

  // ---- internals -----------------------------------------------------------------------------

  private useBulk(n: number, mode: 'auto' | 'always' | 'never'): boolean {
    if (mode === 'never' || this.layout.name !== 'u32' || this.tombstones > 0) return false;
    if (this.capacity < 4 * REGION_SLOTS || n === 0) return false;
    // Two u32 arrays of REGION_SLOTS words in workgroup memory.
    if (this.gpu.limits.maxComputeWorkgroupStorageSize < 8 * REGION_SLOTS + 64) return false;
    if (mode === 'always') return true;
    // On a software adapter workgroup memory is no faster than the rest: the atomic path wins.
    if (this.gpu.isSoftware) return false;
    // Up to 2^24 slots the atomic path wins (an H100 at load 0.5: 12.8 G/s against 2.43 at 2^20,
    // 11.7 against 10.6 at 2^24); from 2^25 the bulk path does (10.4 against 9.97, and 10.6 against
    // 8.46 at 2^27): its passes over every region cost more than a small table's atomics.
    if (this.capacity <= BULK_MIN_CAPACITY) return false;
    // Each touched region costs a load and a store of its slots: worth it from about 256 keys per
    // region. Above load 0.8 the spilled keys, placed last, end up with the longest displacements,
    // which slows lookups (measured on an H200: find-hit -16% at load 0.9), so 'auto' stops there.
    return n >= 1 << 15 && n * 8 >= this.capacity && this.size + n <= 0.8 * this.capacity;
  }

  private bulkScratch(n: number): {
    pairs: GPUBuffer | GPUBuffer[];
    pairWindows: PairWindows;
    spill: GPUBuffer;
    counts: GPUBuffer;
    cursors: GPUBuffer;
    regions: number;
  } {
    const regions = this.capacity / REGION_SLOTS;
    const perWindow = this.pairsPerBinding;
    const windows = Math.ceil(n / perWindow);
    const pairs = Array.from({ length: windows }, (_, k) =>
      this.scratch.get(k === 0 ? 'bulk.pairs' : `bulk.pairs.${k}`, Math.min(perWindow, n - k * perWindow) * 8),
    );
    return {
      pairs: windows === 1 ? (pairs[0] as GPUBuffer) : pairs,
      pairWindows: windows === 1 ? ONE_PAIR_WINDOW : { pairWindows: windows, pairWindowLog2: Math.log2(perWindow) },
      spill: this.scratch.get('bulk.spill', (n + 1) * 4),
      counts: this.scratch.get('bulk.counts', regions * 4),
      cursors: this.scratch.get('bulk.cursors', regions * 4),
      regions,
    };
  }

  /** Grouped pairs (8 bytes each) one binding holds: 2^27 on the GPU hosts (test-only: fewer). */
  private get pairsPerBinding(): number {
    return Math.min(this.gpu.bindingElements(8), this.settings.bulkPairWindow ?? Number.POSITIVE_INFINITY);
  }

  /**
   * Keys one bulk pass takes: its grouped pairs fill BULK_PAIR_WINDOWS bindings at most (2^28 keys
   * on the GPU hosts, the bench's key buffers). A larger batch runs in parts of this many keys, one
   * after another, each loading and storing every region it touches; each part's failed list names
   * positions within that part.
   */
  private get bulkPart(): number {
    return BULK_PAIR_WINDOWS * this.pairsPerBinding;
  }

  private encodeBulkInsert(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    assign: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    // The timing spans the first pass's start to the last pass's end.
    const { first, last } = timestampEnds(timestampWrites);
    const part = this.bulkPart;
    for (let start = 0; start < n; start += part) {
      const count = Math.min(part, n - start);
      const range = (b: GPUBuffer): Binding => (count === n ? b : wordRange(b, start, count));
      const ends = { first: start === 0 ? first : undefined, last: start + count >= n ? last : undefined };
      this.encodeBulkPart(encoder, range(keys), range(values), count, assign, ends);
    }
  }

  private encodeBulkPart(
    encoder: GPUCommandEncoder,
    keys: Binding,
    values: Binding,
    n: number,
    assign: boolean,
    { first, last }: { first?: GPUComputePassTimestampWrites; last?: GPUComputePassTimestampWrites },
  ): void {
    const b = this.bulkScratch(n);
    encoder.clearBuffer(b.counts, 0, b.regions * 4);
    encoder.clearBuffer(b.spill, 0, 4);
    this.dispatch(encoder, bulkCountKernel.variant(), n, { keys, counts: b.counts }, { timestampWrites: first });
    encodeExclusiveScan(this.gpu, encoder, b.counts, b.cursors, b.regions);
    const scatter = { keys, values, cursors: b.cursors, pairs: b.pairs, failed: this.failures.buffer };
    this.dispatch(encoder, bulkScatterKernel.variant(b.pairWindows), n, scatter);
    // The build's failed list is the spill: the pairs the spill pass inserts globally.
    const build = { slots: this.slotsBinding, pairs: b.pairs, ends: b.cursors, counters: this.counters, failed: b.spill };
    const buildKernel = bulkBuildKernel.variant({ assign, ...this.windowing, ...b.pairWindows });
    this.dispatch(encoder, buildKernel, b.regions, build, { invocations: b.regions * 256 });
    const spill = { slots: this.slotsBinding, pairs: b.pairs, spill: b.spill, counters: this.counters, failed: this.failures.buffer };
    const coop = this.probing.coop && this.size + n > this.probing.coopFromLoad * this.capacity;
    const spillKernel = spillInsertKernel.variant({
      layout: this.layout.name,
      assign,
      coop,
      subgroups: coop,
      coopTile: this.probing.coopTile,
      ...this.windowing,
      ...b.pairWindows,
    });
    this.dispatch(encoder, spillKernel, 0, spill, {
      invocations: 1024 * 256,
      timestampWrites: last,
    });
  }

  private params(n: number, mask: number, maxProbes: number, seed: number): LinearProbeParamValues {
    return { n, mask, max_probes: maxProbes, seed };
  }

  /** One pass over the current table: params.n = n, over `invocations` (default n) invocations. */
  private dispatch<B extends BindingsLayout>(
    encoder: GPUCommandEncoder,
    kernel: DefinedKernel<B, LinearProbeParams>,
    n: number,
    buffers: EncodeOptions<B, LinearProbeParams>['buffers'],
    options: { invocations?: number; maxWorkgroups?: number; timestampWrites?: GPUComputePassTimestampWrites } = {},
  ): void {
    kernel.encode(this.gpu, encoder, {
      buffers,
      params: this.params(n, this.capacity - 1, this.maxProbes, this.seed),
      invocations: options.invocations ?? n,
      maxWorkgroups: options.maxWorkgroups,
      timestampWrites: options.timestampWrites,
      // Every linear-probe kernel binds the params uniform; the conditional type cannot see it for a generic B.
    } as unknown as EncodeOptions<B, LinearProbeParams>);
  }

  /** How kernels bind a table of `capacity` slots: whole, or in windows of windowSlots. */
  private windowsFor(capacity: number): SlotWindows {
    const forced = this.settings.windows;
    if (forced !== undefined && forced > 1 && capacity >= 64 * forced)
      return { windows: forced, windowSlotsLog2: Math.log2(capacity / forced) };
    if (capacity <= this.bindingSlots) return ONE_WINDOW;
    return { windows: capacity / this.bindingSlots, windowSlotsLog2: Math.log2(this.bindingSlots) };
  }

  /**
   * The slots of a table of `capacity`, as one buffer or as windows. Throws LimitExceededError
   * when the windows would take more storage bindings than a pass may hold, or word indices
   * would pass 2^32.
   */
  private allocateSlots(capacity: number): GPUBuffer[] {
    const what = `linear-probe.slots (${capacity} ${this.layout.name} slots)`;
    const slotBytes = 4 * this.layout.wordsPerSlot;
    const { windows } = this.windowsFor(capacity);
    const maxWindows = this.gpu.limits.maxStorageBuffersPerShaderStage - OTHER_BINDINGS;
    if (windows > maxWindows)
      throw new LimitExceededError(
        what,
        'maxStorageBuffersPerShaderStage',
        windows + OTHER_BINDINGS,
        this.gpu.limits.maxStorageBuffersPerShaderStage,
        `The table would span ${windows} bindings of ${capacity / windows} slots; use a smaller capacity.`,
      );
    if (capacity * this.layout.wordsPerSlot > 2 ** 32)
      throw new LimitExceededError(what, 'u32 word index', capacity * this.layout.wordsPerSlot, 2 ** 32, 'Use a smaller capacity.');
    const bytes = (capacity / windows) * slotBytes;
    const slots: GPUBuffer[] = [];
    try {
      for (let k = 0; k < windows; k++) slots.push(this.gpu.createBuffer(bytes, windows === 1 ? what : `${what}, window ${k}`));
    } catch (error) {
      for (const window of slots) window.destroy();
      throw error;
    }
    return slots;
  }

  private encodeFillSlots(encoder: GPUCommandEncoder, slots: readonly GPUBuffer[], capacity: number): void {
    const words = (capacity / slots.length) * this.layout.wordsPerSlot;
    for (const window of slots) this.gpu.encodeFill(encoder, window, this.layout.emptyWord, words);
  }

  /** Reads a counters buffer (size, tombstones) and the failed list in one round trip. */
  private async readReport(counters: GPUBuffer, withIndices = true): Promise<{ words: Uint32Array; failures: FailureReport }> {
    const report = this.gpu.pool.acquire(32, BufferUsage.COPY_SRC | BufferUsage.COPY_DST, 'linear-probe.report');
    const encoder = this.gpu.device.createCommandEncoder();
    encoder.copyBufferToBuffer(counters, 0, report, 0, 16);
    encoder.copyBufferToBuffer(this.failures.buffer, 0, report, 16, 4);
    this.gpu.submit([encoder.finish()]);
    const words = new Uint32Array(await this.gpu.readBytes(report, 0, 20));
    this.gpu.pool.release(report);
    const count = words[4] as number;
    const failures = withIndices ? await this.failures.read(this.gpu, count) : { ...(await this.failures.read(this.gpu, 0)), count };
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
