import { BufferUsage, type Gpu, LimitExceededError, type ScratchArena, STORAGE_USAGE } from '@gpuhash/core';
import { stashLinesFor } from './split-pointer';
import { BULK_RECORD_BYTES, REGION_BUCKETS, ROOM_BINS, roomWords } from './wgsl/bulk';
import { COUNTER_WORDS, LIST_COUNT, LIST_HEADER } from './wgsl/common';
import { PLAN_WORDS } from './wgsl/listed-plan';

/** Bytes of one bucket: 32 slots of (key, value). */
export const BUCKET_BYTES = 256;

/** Bytes of the slots buffer for `nalloc` table buckets and their stash lines. */
export function slotsBytes(nalloc: number): number {
  return (nalloc + stashLinesFor(nalloc)) * BUCKET_BYTES;
}

/**
 * The most table buckets one storage binding holds on this device: the slots buffer (table and
 * stash, 256 bytes a bucket) must fit `maxStorageBufferBindingSize` (and `maxBufferSize`). Hive
 * keeps the table in one binding; a larger table throws LimitExceededError.
 */
export function maxBuckets(gpu: Gpu): number {
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  let n = Math.min(2 ** 25, Math.floor(((limit / BUCKET_BYTES) * 64) / 65));
  while (n > 1 && slotsBytes(n) > limit) n--;
  while (n < 2 ** 25 && slotsBytes(n + 1) <= limit) n++;
  return Math.max(1, n);
}

export function limitError(gpu: Gpu, buckets: number): LimitExceededError {
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
  return new LimitExceededError(
    `a Hive table of ${buckets * 32} slots (with its stash)`,
    limit === gpu.limits.maxBufferSize ? 'maxBufferSize' : 'maxStorageBufferBindingSize',
    slotsBytes(buckets),
    limit,
    `Hive keeps a table in one storage binding: at most ${maxBuckets(gpu) * 32} slots on this device. Use a smaller capacity, or request the device with the adapter's limits (requestGpu does).`,
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
  slots: GPUBuffer;
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
    private readonly scratch: ScratchArena,
  ) {
    this.nalloc = nalloc;
    this.stashLines = stashLinesFor(nalloc);
    this.slots = gpu.createBuffer(slotsBytes(nalloc), `hive.slots (${nalloc} buckets)`);
    this.meta = gpu.createBuffer(this.metaWords(nalloc) * 4, 'hive.meta');
    this.counters = gpu.createBuffer(COUNTER_WORDS * 4, 'hive.counters');
    this.lists = this.allocateLists(1024);
    this.dummyRead = gpu.createBuffer(16, 'hive.unused-input');
    this.dummyOut = gpu.createBuffer(16, 'hive.unused-output');
  }

  /** Meta word of table bucket 0's lock. */
  get lockBase(): number {
    return this.nalloc + this.stashLines;
  }

  metaWords(nalloc: number): number {
    return 2 * nalloc + stashLinesFor(nalloc);
  }

  /** Every slot empty, every mask free, every lock open. */
  encodeEmpty(encoder: GPUCommandEncoder, slots: GPUBuffer, meta: GPUBuffer, nalloc: number): void {
    const lines = stashLinesFor(nalloc);
    this.gpu.encodeFill(encoder, slots, 0xffffffff, (nalloc + lines) * 64);
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
    for (const b of [this.slots, this.meta, this.counters, this.lists, this.dummyRead, this.dummyOut]) b.destroy();
    if (this.bulk) for (const buffer of bulkBuffers(this.bulk)) buffer.destroy();
    this.bulk = undefined;
  }
}

function bulkBuffers(b: BulkScratch): GPUBuffer[] {
  return [b.records, b.spill, b.bucketCounts, b.room, b.counts, b.cursors, b.grids];
}
