import { BufferUsage, type Gpu, LimitExceededError, type ScratchArena, STORAGE_USAGE } from '@gpuhash/core';
import { stashLinesFor } from './split-pointer';
import { BULK_RECORD_BYTES, REGION_BUCKETS, ROOM_BINS, roomWords } from './wgsl/bulk';
import { COUNTER_WORDS, LIST_COUNT, LIST_HEADER } from './wgsl/common';
import { PLAN_WORDS } from './wgsl/listed-plan';
import { ONE_WINDOW, type SlotWindows } from './wgsl/windows';

/** Bytes of one bucket: 32 slots of (key, value). */
export const BUCKET_BYTES = 256;

/** Bytes of the slots buffer for `nalloc` table buckets and their stash lines. */
export function slotsBytes(nalloc: number): number {
  return (nalloc + stashLinesFor(nalloc)) * BUCKET_BYTES;
}

/** The most bytes one storage binding (and one buffer) may hold on this device. */
function bindingLimit(gpu: Gpu): number {
  return Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
}

/** Table buckets at most: slot indices (32 a bucket, stash after) and word indices stay within u32. */
const MAX_BUCKETS = 2 ** 25;

/**
 * Storage buffers the op passes bind besides the slots (masks, ops, keys, values, out, counters,
 * lists): the windows of the slots may take the rest of the device's per-stage limit.
 */
const OTHER_OP_PASS_BUFFERS = 7;

/**
 * Where the slots buffer is split (wgsl/windows.ts): one window while table and stash fit one
 * binding, else windows of the largest power of two of buckets one binding holds (2^22 on an H100,
 * 1 GiB). `windowBuckets` (test-only) sets the window size, and splits any table larger than it.
 */
export function slotWindowsFor(gpu: Gpu, nalloc: number, windowBuckets?: number): SlotWindows {
  const total = nalloc + stashLinesFor(nalloc);
  const log2 = windowBucketsLog2(gpu, windowBuckets);
  if (windowBuckets === undefined ? total * BUCKET_BYTES <= bindingLimit(gpu) : total <= windowBuckets) return ONE_WINDOW;
  return { windows: Math.ceil(total / 2 ** log2), windowBucketsLog2: log2 };
}

function windowBucketsLog2(gpu: Gpu, windowBuckets?: number): number {
  return windowBuckets === undefined ? Math.floor(Math.log2(bindingLimit(gpu) / BUCKET_BYTES)) : Math.log2(windowBuckets);
}

/**
 * The most table buckets this device holds: in one storage binding, or in as many windows of the
 * slots as a pass may bind beside its other buffers (maxStorageBuffersPerShaderStage), at most
 * 2^25 (2^30 slots). `windowBuckets` is the test-only window size (HiveOptions.windowBuckets).
 */
export function maxBuckets(gpu: Gpu, windowBuckets?: number): number {
  const limit = bindingLimit(gpu);
  let one = Math.min(MAX_BUCKETS, Math.floor(((limit / BUCKET_BYTES) * 64) / 65));
  while (one > 1 && slotsBytes(one) > limit) one--;
  while (one < MAX_BUCKETS && slotsBytes(one + 1) <= limit) one++;
  const windows = gpu.limits.maxStorageBuffersPerShaderStage - OTHER_OP_PASS_BUFFERS;
  const span = 2 ** windowBucketsLog2(gpu, windowBuckets) * windows;
  let split = Math.min(MAX_BUCKETS, span);
  while (split > 1 && split + stashLinesFor(split) > span) split--;
  return Math.max(1, windows >= 2 ? Math.max(one, split) : one);
}

export function limitError(gpu: Gpu, buckets: number, windowBuckets?: number): LimitExceededError {
  const limit = bindingLimit(gpu);
  const most = maxBuckets(gpu, windowBuckets);
  return new LimitExceededError(
    `a Hive table of ${buckets * 32} slots (with its stash)`,
    limit === gpu.limits.maxBufferSize ? 'maxBufferSize' : 'maxStorageBufferBindingSize',
    slotsBytes(buckets),
    limit,
    `Hive splits its slots over at most ${gpu.limits.maxStorageBuffersPerShaderStage - OTHER_OP_PASS_BUFFERS} storage bindings (maxStorageBuffersPerShaderStage less the passes' other buffers), up to 2^30 slots: at most ${most * 32} slots on this device. Use a smaller capacity, or request the device with the adapter's limits (requestGpu does).`,
  );
}

/**
 * Scratch of the bulk build (wgsl/bulk.ts): per key of a batch, a record and a spill entry; per
 * bucket, a count and a room byte (then the table's histogram of room bins); per region, a count
 * and a cursor; the grids of the passes over the spill. Once the build has read the records, their
 * buffer holds those passes' lists.
 */
export interface BulkScratch {
  records: GPUBuffer;
  spill: GPUBuffer;
  bucketCounts: GPUBuffer;
  room: GPUBuffer;
  counts: GPUBuffer;
  cursors: GPUBuffer;
  grids: GPUBuffer;
  /** Keys of the largest batch it holds: also the capacity of each list in `records`. */
  n: number;
  regions: number;
}

/** Bytes of the largest bulk-build scratch buffer for a batch of n keys (the records). */
export function bulkRecordsBytes(n: number): number {
  // The records, or the lists of the passes over the spill (a header and LIST_COUNT lists of n).
  return Math.max(n * BULK_RECORD_BYTES, (LIST_HEADER + LIST_COUNT * n) * 4);
}

/**
 * The GPU buffers of one table. slots: the table's buckets, then the stash lines (bucket
 * nalloc + j is stash line j). meta: one free mask per bucket (table and stash), then one lock
 * word per table bucket. counters: device-resident totals. lists: per-batch scratch lists.
 */
export class HiveStorage {
  /** The slots buffer, in its windows (one buffer when it fits one binding). */
  slotBuffers: GPUBuffer[];
  /** How slotBuffers split the slots: every slot-binding kernel's variant carries it. */
  windowing: SlotWindows;
  meta: GPUBuffer;
  readonly counters: GPUBuffer;
  lists: GPUBuffer;
  listCap = 0;
  /** Stand-ins for bindings a pass does not use (read-only ones may alias; `out` may not). */
  readonly dummyRead: GPUBuffer;
  readonly dummyOut: GPUBuffer;
  nalloc: number;
  stashLines: number;
  private bulk: BulkScratch | undefined;

  constructor(
    private readonly gpu: Gpu,
    nalloc: number,
    /** Outgrown per-batch buffers go here: encodes already recorded may still use them. */
    readonly scratch: ScratchArena,
    /** Test-only: buckets per window of the slots (see slotWindowsFor). */
    readonly windowBuckets?: number,
  ) {
    this.nalloc = nalloc;
    this.stashLines = stashLinesFor(nalloc);
    ({ buffers: this.slotBuffers, windowing: this.windowing } = this.allocateSlots(nalloc));
    this.meta = gpu.createBuffer(this.metaWords(nalloc) * 4, 'hive.meta');
    this.counters = gpu.createBuffer(COUNTER_WORDS * 4, 'hive.counters');
    this.lists = this.allocateLists(1024);
    this.dummyRead = gpu.createBuffer(16, 'hive.unused-input');
    this.dummyOut = gpu.createBuffer(16, 'hive.unused-output');
  }

  /** The slots as a kernel binds them: the buffer, or its windows. */
  get slots(): GPUBuffer | readonly GPUBuffer[] {
    return this.windowing.windows === 1 ? (this.slotBuffers[0] as GPUBuffer) : this.slotBuffers;
  }

  /** The most table buckets this table's storage may grow to. */
  get maxBuckets(): number {
    return maxBuckets(this.gpu, this.windowBuckets);
  }

  /** Slots buffers for `nalloc` buckets and their stash lines, in windows where one binding cannot hold them. */
  allocateSlots(nalloc: number): { buffers: GPUBuffer[]; windowing: SlotWindows } {
    const windowing = slotWindowsFor(this.gpu, nalloc, this.windowBuckets);
    const total = slotsBytes(nalloc);
    if (windowing.windows === 1) return { buffers: [this.gpu.createBuffer(total, `hive.slots (${nalloc} buckets)`)], windowing };
    const per = 2 ** windowing.windowBucketsLog2 * BUCKET_BYTES;
    const buffers = Array.from({ length: windowing.windows }, (_, w) =>
      this.gpu.createBuffer(Math.min(per, total - w * per), `hive.slots (${nalloc} buckets, window ${w})`),
    );
    return { buffers, windowing };
  }

  /**
   * Copies `bytes` of slots from byte `fromByte` of one list of windows to the start of another
   * (each list covers its slots in order; window sizes may differ, as from one buffer to windows).
   */
  encodeCopySlots(encoder: GPUCommandEncoder, from: readonly GPUBuffer[], to: readonly GPUBuffer[], bytes: number, fromByte = 0): void {
    let at = 0;
    let [i, j, fi, tj] = [0, 0, fromByte, 0];
    while (i < from.length && fi >= (from[i] as GPUBuffer).size) [fi, i] = [fi - (from[i] as GPUBuffer).size, i + 1];
    while (at < bytes) {
      const src = from[i] as GPUBuffer;
      const dst = to[j] as GPUBuffer;
      const n = Math.min(bytes - at, src.size - fi, dst.size - tj);
      encoder.copyBufferToBuffer(src, fi, dst, tj, n);
      at += n;
      fi += n;
      tj += n;
      if (fi === src.size) [i, fi] = [i + 1, 0];
      if (tj === dst.size) [j, tj] = [j + 1, 0];
    }
  }

  /** The slots' first `bytes` read back, windows joined. */
  async readSlots(bytes: number): Promise<Uint32Array> {
    const out = new Uint32Array(bytes / 4);
    let at = 0;
    for (const b of this.slotBuffers) {
      const n = Math.min(b.size, bytes - at);
      if (n <= 0) break;
      out.set(new Uint32Array(await this.gpu.readBytes(b, 0, n)), at / 4);
      at += n;
    }
    return out;
  }

  /** Meta word of table bucket 0's lock. */
  get lockBase(): number {
    return this.nalloc + this.stashLines;
  }

  metaWords(nalloc: number): number {
    return 2 * nalloc + stashLinesFor(nalloc);
  }

  /** Every slot empty, every mask free, every lock open. */
  encodeEmpty(encoder: GPUCommandEncoder, slots: readonly GPUBuffer[], meta: GPUBuffer, nalloc: number): void {
    const lines = stashLinesFor(nalloc);
    for (const b of slots) this.gpu.encodeFill(encoder, b, 0xffffffff, b.size / 4);
    this.gpu.encodeFill(encoder, meta, 0xffffffff, nalloc + lines);
    encoder.clearBuffer(meta, (nalloc + lines) * 4, nalloc * 4);
  }

  /** Makes the lists hold batches of n (a new buffer; the old one is retired, not destroyed). */
  ensureLists(n: number): void {
    if (n <= this.listCap) return;
    this.scratch.retire(this.lists);
    this.lists = this.allocateLists(Math.max(n, 2 * this.listCap));
  }

  private allocateLists(cap: number): GPUBuffer {
    const bytes = (LIST_HEADER + LIST_COUNT * cap) * 4;
    this.gpu.checkBufferSize(bytes, `hive batch lists (${LIST_COUNT} words per key of a batch)`);
    this.listCap = cap;
    return this.gpu.createBuffer(bytes, 'hive.lists');
  }

  /** The bulk build's scratch for a batch of n keys into a table of `buckets` buckets (kept and grown; the old one is retired). */
  bulkScratch(n: number, buckets: number): BulkScratch {
    const regions = Math.ceil(buckets / REGION_BUCKETS);
    const old = this.bulk;
    if (old && old.n >= n && old.regions === regions) return old;
    const size = Math.max(n, old?.n ?? 0);
    if (old) for (const buffer of bulkBuffers(old)) this.scratch.retire(buffer);
    this.bulk = {
      records: this.gpu.createBuffer(bulkRecordsBytes(size), 'hive.bulk.records'),
      spill: this.gpu.createBuffer((size + 1) * 4, 'hive.bulk.spill'),
      bucketCounts: this.gpu.createBuffer(regions * REGION_BUCKETS * 4, 'hive.bulk.bucket-counts'),
      room: this.gpu.createBuffer((roomWords(regions) + ROOM_BINS) * 4, 'hive.bulk.room'),
      counts: this.gpu.createBuffer(regions * 4, 'hive.bulk.counts'),
      cursors: this.gpu.createBuffer(regions * 4, 'hive.bulk.cursors'),
      grids: this.gpu.createBuffer(PLAN_WORDS * 4, 'hive.bulk.grids', STORAGE_USAGE | BufferUsage.INDIRECT),
      n: size,
      regions,
    };
    return this.bulk;
  }

  destroy(): void {
    for (const b of [...this.slotBuffers, this.meta, this.counters, this.lists, this.dummyRead, this.dummyOut]) b.destroy();
    if (this.bulk) for (const buffer of bulkBuffers(this.bulk)) buffer.destroy();
    this.bulk = undefined;
  }
}

function bulkBuffers(b: BulkScratch): GPUBuffer[] {
  return [b.records, b.spill, b.bucketCounts, b.room, b.counts, b.cursors, b.grids];
}
