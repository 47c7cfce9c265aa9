import {
  type Binding,
  type BindingsLayout,
  type DefinedKernel,
  type EncodeOptions,
  encodeExclusiveScan,
  encodeWindowOrder,
  type Gpu,
  wordRange,
} from '@gpuhash/core';
import { BUCKET_SLOTS, type SplitPointer, splitPointerFor } from './split-pointer';
import type { BulkScratch, HiveStorage } from './storage';
import {
  bulkBuildKernel,
  bulkCountKernel,
  bulkRoomKernel,
  bulkScatterKernel,
  LOCAL_COUNT_CHUNK,
  LOCAL_REGIONS,
  LOCAL_SCATTER_CHUNK,
  REGION_BUCKETS,
  ROOM_BINS,
  roomWords,
} from './wgsl/bulk';
import { LIST_HEADER, List, MODE_APPLY, MODE_DRAIN, WORKGROUP_SIZE } from './wgsl/common';
import { findKernel } from './wgsl/find';
import { homePassKernel } from './wgsl/home-pass';
import { listedPlanKernel } from './wgsl/listed-plan';
import { appendFailedKernel } from './wgsl/lists';
import { LOCKED_TILE, lockedPassKernel } from './wgsl/locked-pass';
import { type opPassBindings, opPassKernel } from './wgsl/op-pass';
import type { HiveParams, HiveParamValues } from './wgsl/params';
import { releaseKernel } from './wgsl/release';
import { orderedSpillKernel, spillCountKernel, spillScatterKernel } from './wgsl/window-order';

/**
 * Op passes run over at most this many batch entries at a time, so the per-batch scratch lists
 * (16 bytes per entry: four lists) stay small next to the table however large a batch is.
 */
export const OP_CHUNK = 1 << 22;

/**
 * Workgroups for passes whose real size is only known on the device (they grid-stride over it):
 * the release pass (a store and an atomic per entry) and the locked pass (bucket locks and
 * cuckoo paths, a few percent of a batch at load 0.95).
 */
const RELEASE_WORKGROUPS = 512;
const LOCKED_WORKGROUPS = 4096;
/** Most workgroups of the passes over the bulk build's spill (pass A: one per 256 entries, up to one grid dimension). */
const SPILL_CAPS = { passA: 65_535, release: RELEASE_WORKGROUPS, locked: LOCKED_WORKGROUPS };

/** Per-dispatch fields of the Params uniform (the rest describe the table). */
export interface ParamFields {
  n: number;
  mode?: number;
  aux0?: number;
  aux1?: number;
  aux2?: number;
  /** Linear hashing state the dispatch addresses with (default: the table's). */
  pointer?: SplitPointer;
  /** Entries per list of the bound lists buffer (default: the table's lists). */
  listCap?: number;
}

/** The buffers of an op pass by binding name. */
type OpPassBuffers = EncodeOptions<ReturnType<typeof opPassBindings>, HiveParams>['buffers'];

/** The buffers of a find pass by binding name (`order` only for the ordered variant). */
export interface FindBuffers {
  ops: Binding;
  keys: Binding;
  out_values: GPUBuffer;
  out_found: GPUBuffer;
  counters: GPUBuffer;
  masks_ro: GPUBuffer;
  slots_v4: GPUBuffer | readonly GPUBuffer[];
  order: GPUBuffer;
}

/** A batch of ops in device buffers: insert batches leave ops and out out. */
export interface OpBatch {
  ops?: GPUBuffer;
  keys: Binding;
  values: Binding;
  out?: GPUBuffer;
  n: number;
  mode: number;
  /** Pass A's inserts look at their home before scanning their buckets (\`HOME_VIEW_BELOW\`). */
  homeView?: boolean;
}

/**
 * Encodes the table's kernels: the Params uniform for the current geometry (buckets, split
 * pointer, storage), single dispatches, the three op passes of insert and mixed batches (in
 * chunks), and the stash drain.
 */
export class Dispatcher {
  /**
   * Profiling hook (tools/gpu-check's perf-hive): timestamp writes for every pass that has none of
   * its own, named by kernel. Unset in normal use.
   */
  profile?: (kernel: string) => GPUComputePassTimestampWrites | undefined;
  /** Lanes per locked-pass op (perf-hive compares tiles; not public API). */
  lockedTile = LOCKED_TILE;

  constructor(
    private readonly gpu: Gpu,
    private readonly storage: HiveStorage,
    /** Table buckets (N): every dispatch addresses keys with the split pointer of N. */
    public buckets: number,
    readonly subgroups: boolean,
    readonly maxEvictions: number,
    readonly chunk: number,
  ) {}

  get splitPointer(): SplitPointer {
    return splitPointerFor(this.buckets);
  }

  /** The Params of one dispatch: its own fields, and the geometry of the table (or the pointer and lists given). */
  params(f: ParamFields): HiveParamValues {
    const s = this.storage;
    const { pointer = this.splitPointer, listCap = s.listCap, ...own } = f;
    return {
      ...own,
      n0: pointer.n0,
      split: pointer.split,
      nalloc: s.nalloc,
      stash_lines: s.stashLines,
      lock_base: s.lockBase,
      list_cap: listCap,
      max_evict: this.maxEvictions,
    };
  }

  /** One pass of a Hive kernel, its buffers by binding name. */
  dispatch<B extends BindingsLayout>(
    encoder: GPUCommandEncoder,
    kernel: DefinedKernel<B, HiveParams>,
    invocations: number,
    buffers: EncodeOptions<B, HiveParams>['buffers'],
    fields: ParamFields,
    options: {
      maxWorkgroups?: number;
      timestampWrites?: GPUComputePassTimestampWrites;
      indirect?: { buffer: GPUBuffer; offset: number };
    } = {},
  ): void {
    kernel.encode(this.gpu, encoder, {
      buffers,
      params: this.params(fields),
      invocations,
      maxWorkgroups: options.maxWorkgroups,
      indirect: options.indirect,
      timestampWrites: options.timestampWrites ?? this.profile?.(kernel.name),
      // Every Hive kernel binds the params uniform; the conditional type cannot see it for a generic B.
    } as unknown as EncodeOptions<B, HiveParams>);
  }

  /**
   * Pass A, release, pass B for batch entries [start, start + count) (default: all), in chunks of
   * `chunk` entries; in a mixed batch, its finds first and the home pass before each pass A. The
   * failed list is reset once: it collects the whole range (up to its capacity of one chunk; the
   * count is always exact). With timestamp writes, the first pass writes the beginning and the
   * last pass B the end.
   */
  encodeOpPasses(encoder: GPUCommandEncoder, b: OpBatch, timestampWrites?: GPUComputePassTimestampWrites, start = 0, count = b.n): void {
    const s = this.storage;
    s.ensureLists(Math.min(count, this.chunk));
    encoder.clearBuffer(s.lists, 0, LIST_HEADER * 4);
    if (count === 0) return;
    let [first, last] = splitTimestamps(timestampWrites);
    const buffers = this.opBuffers(b.ops ?? b.keys, b.keys, b.values, b.out ?? s.dummyOut, s.lists);
    const end = start + count;
    if (b.mode === MODE_APPLY) {
      // A mixed batch's finds run first, read-only, on the table as it was before the batch; out
      // takes (value, status) pairs, out_found a stand-in.
      const find = { ...this.findBuffers(b.keys, b.out as GPUBuffer, s.dummyOut), ops: b.ops ?? b.keys };
      this.dispatch(
        encoder,
        findKernel.variant(s.windowing),
        count,
        find,
        { n: count, mode: MODE_APPLY, aux1: start },
        { timestampWrites: first },
      );
      first = undefined;
    }
    for (let at = start; at < end; at += this.chunk) {
      const n = Math.min(this.chunk, end - at);
      // The deferred, freed and rest lists are consumed within a chunk (the failed list is not).
      if (at > start) {
        encoder.clearBuffer(s.lists, 0, 2 * 4);
        encoder.clearBuffer(s.lists, List.rest * 4, 4);
      }
      const fields = { n, mode: b.mode, aux1: at, aux0: b.homeView ? 1 : 0 };
      const tw = at === start ? first : undefined;
      if (b.mode === MODE_APPLY) {
        // A mixed batch's ops their home settles first; pass A takes the rest from its list.
        this.dispatch(encoder, homePassKernel.variant({ subgroups: this.subgroups, ...s.windowing }), n, buffers, fields, {
          timestampWrites: tw,
        });
        this.dispatch(encoder, this.opPass, n, buffers, { n, mode: b.mode, aux2: 2, aux0: b.homeView ? 1 : 0 });
      } else {
        this.dispatch(encoder, this.opPass, n, buffers, fields, { timestampWrites: tw });
      }
      const release = { slots: s.slots, masks: s.meta, lists: s.lists };
      this.dispatch(encoder, releaseKernel.variant(s.windowing), n, release, { n }, { maxWorkgroups: RELEASE_WORKGROUPS });
      this.dispatch(encoder, this.lockedPass, n, buffers, fields, {
        maxWorkgroups: LOCKED_WORKGROUPS,
        timestampWrites: at + n === end ? last : undefined,
      });
    }
  }

  /**
   * An insert batch by the bulk build, in parts of at most `partKeys` keys (each part's records,
   * 16 bytes a key, must fit one binding: 2^27 - 64 keys on an H100). Each part binds its range of
   * the keys and values; the failed lists of the parts add up in the table's, batch-relative.
   * With timestamp writes, the first part's count pass writes the beginning and the last pass B
   * the end.
   */
  encodeBulkInsertParts(
    encoder: GPUCommandEncoder,
    b: OpBatch,
    scratch: BulkScratch,
    plan: boolean,
    partKeys: number,
    orderSpill: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const s = this.storage;
    s.ensureLists(Math.min(b.n, this.chunk));
    encoder.clearBuffer(s.lists, 0, LIST_HEADER * 4);
    const parts = Math.max(1, Math.ceil(b.n / partKeys));
    const [first, last] = splitTimestamps(timestampWrites);
    for (let k = 0; k < parts; k++) {
      const start = k * partKeys;
      const n = Math.min(partKeys, b.n - start);
      const part = parts === 1 ? b : { ...b, keys: wordRange(b.keys, start, n), values: wordRange(b.values, start, n), n };
      const ends = { first: k === 0 ? first : undefined, last: k === parts - 1 ? last : undefined };
      this.encodeBulkInsert(encoder, part, scratch, plan, start, orderSpill, ends);
    }
  }

  /**
   * One part of an insert batch by the bulk build (wgsl/bulk.ts): partition by region, build each
   * region in workgroup memory, then the op passes over the keys it spilled (and the reserved
   * keys, which pass A reports as it reports them in any batch), whose failures join the table's
   * failed list shifted by `start`, the part's first batch index. `ends`: the count pass's
   * beginning timestamp and pass B's end timestamp (each only when given).
   */
  private encodeBulkInsert(
    encoder: GPUCommandEncoder,
    b: OpBatch,
    scratch: BulkScratch,
    plan: boolean,
    start: number,
    orderSpill: boolean,
    ends: { first?: GPUComputePassTimestampWrites; last?: GPUComputePassTimestampWrites },
  ): void {
    const s = this.storage;
    const regions = scratch.regions;
    encoder.clearBuffer(scratch.spill, 0, 4);
    const { first, last } = ends;
    this.encodePartition(encoder, b, scratch, plan, first);
    const build = {
      slots: s.slots,
      masks: s.meta,
      records: scratch.records,
      ends: scratch.cursors,
      counters: s.counters,
      spill: scratch.spill,
      room: scratch.room,
    };
    this.dispatch(encoder, bulkBuildKernel.variant(s.windowing), regions * WORKGROUP_SIZE, build, {
      n: regions,
      mode: b.mode,
      aux0: this.buckets,
      aux1: plan ? 1 : 0,
    });
    this.encodeSpillPasses(encoder, b, scratch, start, orderSpill, last);
  }

  /**
   * The bulk build's partition of a batch by region: count, scan, scatter; with the overflow plan,
   * the count is per bucket and the room pass turns it into the buckets' room (and its histogram)
   * and the regions' counts. Leaves the records grouped by region in `scratch.records` (with the
   * plan, each with its second bucket's room byte), each region's end offset in `scratch.cursors`,
   * and the reserved keys in the spill (which it expects cleared). \`local\`: the partition in
   * workgroup memory first (the default for tables of up to LOCAL_REGIONS regions).
   */
  encodePartition(
    encoder: GPUCommandEncoder,
    b: OpBatch,
    scratch: BulkScratch,
    plan: boolean,
    first?: GPUComputePassTimestampWrites,
    // Small tables count and scatter in workgroup memory first (bulk.ts, LOCAL_REGIONS): a
    // workgroup per chunk of keys.
    local = scratch.regions <= LOCAL_REGIONS,
  ): void {
    if (local && scratch.regions > LOCAL_REGIONS)
      throw new RangeError(`encodePartition: ${scratch.regions} regions, more than a local partition holds`);
    const { n, keys, values } = b;
    const words = roomWords(scratch.regions);
    const fields = { n, aux0: local ? scratch.regions : 0 };
    const chunks = (chunk: number) => (local ? Math.max(1, Math.ceil(n / chunk)) : undefined);
    encoder.clearBuffer(scratch.counts, 0, scratch.regions * 4);
    if (plan) {
      encoder.clearBuffer(scratch.bucketCounts, 0, scratch.regions * REGION_BUCKETS * 4);
      encoder.clearBuffer(scratch.room, words * 4, ROOM_BINS * 4);
      const perBucket = bulkCountKernel.variant({ perBucket: true });
      this.dispatch(encoder, perBucket, n, { keys, counts: scratch.bucketCounts }, { n }, { timestampWrites: first });
      const room = { masks: this.storage.meta, counts: scratch.bucketCounts, room: scratch.room, region_counts: scratch.counts };
      this.dispatch(encoder, bulkRoomKernel.variant(), words, room, { n: words, aux0: this.buckets });
    } else {
      const count = bulkCountKernel.variant({ local });
      this.dispatch(encoder, count, n, { keys, counts: scratch.counts }, fields, {
        timestampWrites: first,
        maxWorkgroups: chunks(LOCAL_COUNT_CHUNK),
      });
    }
    encodeExclusiveScan(this.gpu, encoder, scratch.counts, scratch.cursors, scratch.regions);
    const scatter = { keys, values, cursors: scratch.cursors, records: scratch.records, spill: scratch.spill, room: scratch.room };
    this.dispatch(
      encoder,
      bulkScatterKernel.variant({ local }),
      n,
      scatter,
      { ...fields, aux1: plan ? 1 : 0 },
      { maxWorkgroups: chunks(LOCAL_SCATTER_CHUNK) },
    );
  }

  /**
   * Pass A, release and pass B over the bulk build's spill, each in one dispatch whatever its
   * length: pass A in "listed" mode (entry j of the spill is batch index spill[1 + j]), the grids
   * planned on the device from the spill's length, and the lists in the records buffer, which the
   * build has consumed and which holds a list of n entries each. (The op passes proper run in
   * chunks, lists sized to one chunk: over a spill of a few percent of the batch, that was three
   * passes for each 2^22 keys of the batch, nearly all of them empty.) The failed list is appended
   * to the table's at the end (appendFailedKernel): its count, and as many entries as that holds.
   */
  private encodeSpillPasses(
    encoder: GPUCommandEncoder,
    b: OpBatch,
    scratch: BulkScratch,
    start: number,
    orderSpill: boolean,
    last?: GPUComputePassTimestampWrites,
  ): void {
    const s = this.storage;
    const lists = scratch.records;
    const listCap = scratch.n;
    const grids = scratch.grids;
    encoder.clearBuffer(lists, 0, LIST_HEADER * 4);
    const spill = orderSpill ? this.encodeSpillOrder(encoder, b, scratch) : scratch.spill;
    this.dispatch(encoder, listedPlanKernel.variant(SPILL_CAPS), 1, { spill, grids }, { n: 1, aux1: this.lockedTile });
    // Listed: ops is the spill (a count, then batch indices).
    const buffers = this.opBuffers(spill, b.keys, b.values, s.dummyOut, lists);
    const fields = { n: b.n, mode: b.mode, aux2: 1, listCap };
    const planned = (k: number) => ({ buffer: grids, offset: 3 * k * 4 });
    this.dispatch(encoder, this.opPass, 0, buffers, fields, { indirect: planned(0) });
    const release = { slots: s.slots, masks: s.meta, lists };
    this.dispatch(encoder, releaseKernel.variant(s.windowing), 0, release, { n: b.n, listCap }, { indirect: planned(1) });
    this.dispatch(encoder, this.lockedPass, 0, buffers, fields, {
      indirect: planned(2),
      timestampWrites: last,
    });
    this.dispatch(
      encoder,
      appendFailedKernel.variant(),
      WORKGROUP_SIZE,
      { part_lists: lists, lists: s.lists },
      { n: 0, aux0: start, aux1: listCap },
      { maxWorkgroups: 1 },
    );
  }

  /**
   * The spill of a bulk build part window by window (wgsl/window-order.ts' spill order): run
   * (window of b1, window of b2), so that the op passes over it read at most two windows of the
   * table at a time. Returns the ordered spill list, in scratch.
   */
  private encodeSpillOrder(encoder: GPUCommandEncoder, b: OpBatch, scratch: BulkScratch): GPUBuffer {
    const s = this.storage;
    const w = s.windowing;
    const variant = { windows: w.windows * w.windows + 1, slotWindows: w.windows, windowBucketsLog2: w.windowBucketsLog2 };
    const count = spillCountKernel.variant(variant);
    const scatter = spillScatterKernel.variant(variant);
    const inputs = { keys: b.keys, spill: scratch.spill };
    const { order } = encodeWindowOrder(this.gpu, encoder, b.n, variant.windows, s.scratch, (p, options) =>
      p.pass === 'count'
        ? this.dispatch(encoder, count, options.invocations, { ...inputs, ...p.buffers }, { n: b.n }, options)
        : this.dispatch(encoder, scatter, options.invocations, { ...inputs, ...p.buffers }, { n: b.n }, options),
    );
    const ordered = s.scratch.get('spill.ordered', (b.n + 1) * 4);
    this.dispatch(encoder, orderedSpillKernel.variant(), b.n, { spill: scratch.spill, order, ordered }, { n: b.n });
    return ordered;
  }

  /** Moves stash keys into the table where they now fit (after every resize): the locked pass over the stash slots. */
  encodeDrain(encoder: GPUCommandEncoder): void {
    const s = this.storage;
    const jobs = s.stashLines * BUCKET_SLOTS;
    // The drain reads its jobs from the stash: ops, keys and values are stand-ins.
    const buffers = this.opBuffers(s.dummyRead, s.dummyRead, s.dummyRead, s.dummyOut, s.lists);
    this.dispatch(encoder, this.lockedPass, jobs, buffers, { n: jobs, mode: MODE_DRAIN });
  }

  /** The buffers of an op pass (A, B or the home pass) over the table, by binding name. */
  opBuffers(ops: Binding, keys: Binding, values: Binding, out: GPUBuffer, lists: GPUBuffer): OpPassBuffers {
    const s = this.storage;
    return { slots: s.slots, masks: s.meta, ops, keys, values, out, counters: s.counters, lists };
  }

  /**
   * The buffers of a find pass: the table read-only (the slots as 16-byte words; the meta buffer's
   * masks and lock words), keys as ops (find batches; a mixed batch's caller names its ops). Only
   * the ordered variant binds `order`, which the bindings' type cannot tell from the variant: it
   * is in the type, and given where ordered.
   */
  findBuffers(keys: Binding, outValues: GPUBuffer, outFound: GPUBuffer): FindBuffers {
    const s = this.storage;
    return {
      ops: keys,
      keys,
      out_values: outValues,
      out_found: outFound,
      counters: s.counters,
      masks_ro: s.meta,
      slots_v4: s.slots,
    } as FindBuffers;
  }

  private get opPass() {
    return opPassKernel.variant({ subgroups: this.subgroups, ...this.storage.windowing });
  }

  private get lockedPass() {
    return lockedPassKernel.variant({ subgroups: this.subgroups, tile: this.lockedTile, ...this.storage.windowing });
  }
}

/** One pass's timestamp writes split over several: the first writes the beginning, the last the end. */
export function splitTimestamps(
  tw: GPUComputePassTimestampWrites | undefined,
): [GPUComputePassTimestampWrites | undefined, GPUComputePassTimestampWrites | undefined] {
  if (!tw) return [undefined, undefined];
  const { querySet, beginningOfPassWriteIndex: begin, endOfPassWriteIndex: end } = tw;
  return [
    begin === undefined ? undefined : { querySet, beginningOfPassWriteIndex: begin },
    end === undefined ? undefined : { querySet, endOfPassWriteIndex: end },
  ];
}
