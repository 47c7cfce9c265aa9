import { encodeExclusiveScan, type Gpu, type Kernel } from '@gpuhash/core';
import { BUCKET_SLOTS, type SplitPointer, splitPointerFor } from './split-pointer';
import type { BulkScratch, HiveStorage } from './storage';
import { bulkBuildKernel, bulkCountKernel, bulkScatterKernel } from './wgsl/bulk';
import { LIST_HEADER, MODE_APPLY, MODE_DRAIN, PARAM_WORDS, WORKGROUP_SIZE } from './wgsl/common';
import { findKernel } from './wgsl/find';
import { listedPlanKernel, PLAN_WORDS } from './wgsl/listed-plan';
import { LOCKED_TILE, lockedPassKernel } from './wgsl/locked-pass';
import { opPassKernel } from './wgsl/op-pass';
import { releaseKernel } from './wgsl/release';

/**
 * Op passes run over at most this many batch entries at a time, so the per-batch scratch lists
 * (12 bytes per entry) stay small next to the table however large a batch is.
 */
export const OP_CHUNK = 1 << 22;

/**
 * Workgroups for passes whose real size is only known on the device (they grid-stride over it):
 * the release pass (a store and an atomic per entry) and the locked pass (bucket locks and
 * cuckoo paths, a few percent of a batch at load 0.95).
 */
const RELEASE_WORKGROUPS = 512;
const LOCKED_WORKGROUPS = 4096;
/** Most workgroups of a listed pass A (the bulk build's spill, a few percent of the batch: most chunks are empty). */
const LISTED_WORKGROUPS = 2048;
const LISTED_CAPS = { passA: LISTED_WORKGROUPS, release: RELEASE_WORKGROUPS, locked: LOCKED_WORKGROUPS };

/** Per-dispatch fields of the Params uniform (the rest describe the table). */
export interface ParamFields {
  n: number;
  mode?: number;
  aux0?: number;
  aux1?: number;
  aux2?: number;
  /** Linear hashing state the dispatch addresses with (default: the table's). */
  pointer?: SplitPointer;
}

/** A batch of ops in device buffers: insert batches leave ops and out out. */
export interface OpBatch {
  ops?: GPUBuffer;
  keys: GPUBuffer;
  values: GPUBuffer;
  out?: GPUBuffer;
  n: number;
  mode: number;
  /**
   * The bulk build's spill list (a count, then batch indices): only those entries run, read from
   * the batch by index. The failed list is not reset (the bulk scatter has reported into it).
   */
  listed?: GPUBuffer;
  /** With `listed`: room for the passes' grids, planned on the device from the list's length (wgsl/listed-plan.ts). */
  grids?: GPUBuffer;
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

  params(f: ParamFields): Uint32Array {
    const s = this.storage;
    const p = f.pointer ?? this.splitPointer;
    const words = new Uint32Array(PARAM_WORDS);
    words.set([
      f.n,
      p.n0,
      p.split,
      s.nalloc,
      s.stashLines,
      s.lockBase,
      s.listCap,
      this.maxEvictions,
      f.mode ?? 0,
      f.aux0 ?? 0,
      f.aux1 ?? 0,
      f.aux2 ?? 0,
    ]);
    return words;
  }

  dispatch(
    encoder: GPUCommandEncoder,
    kernel: Kernel,
    invocations: number,
    buffers: GPUBuffer[],
    fields: ParamFields,
    options: {
      maxWorkgroups?: number;
      timestampWrites?: GPUComputePassTimestampWrites;
      indirect?: { buffer: GPUBuffer; offset: number };
    } = {},
  ): void {
    const params = this.gpu.uniforms(this.params(fields));
    this.gpu.encodeDispatch(
      encoder,
      kernel,
      { bindings: [params, ...buffers], invocations, maxWorkgroups: options.maxWorkgroups, indirect: options.indirect },
      options.timestampWrites ?? this.profile?.(kernel.name),
    );
    this.gpu.pool.release(params);
  }

  /**
   * Pass A, release, pass B for batch entries [start, start + count) (default: all), in chunks of
   * `chunk` entries. The failed list is reset once: it collects the whole range (up to its
   * capacity of one chunk; the count is always exact). With timestamp writes, the first pass A
   * writes the beginning and the last pass B the end.
   */
  encodeOpPasses(encoder: GPUCommandEncoder, b: OpBatch, timestampWrites?: GPUComputePassTimestampWrites, start = 0, count = b.n): void {
    const s = this.storage;
    s.ensureLists(Math.min(count, this.chunk));
    encoder.clearBuffer(s.lists, 0, (b.listed ? 2 : LIST_HEADER) * 4);
    if (count === 0) return;
    let [first, last] = splitTimestamps(timestampWrites);
    const bindings = [s.slots, s.meta, b.listed ?? b.ops ?? b.keys, b.keys, b.values, b.out ?? s.dummyOut, s.counters, s.lists];
    const end = start + count;
    if (b.mode === MODE_APPLY) {
      // A mixed batch's finds run first, read-only, on the table as it was before the batch.
      const findBindings = [s.slots, b.ops ?? b.keys, b.keys, b.out as GPUBuffer, s.dummyOut, s.counters, s.meta, s.slots];
      this.dispatch(encoder, findKernel(), count, findBindings, { n: count, mode: MODE_APPLY, aux1: start }, { timestampWrites: first });
      first = undefined;
    }
    const grids = b.listed ? b.grids : undefined;
    if (grids) {
      if (start !== 0) throw new Error('Dispatcher: planned listed passes start at entry 0');
      const chunks = Math.ceil(count / this.chunk);
      this.dispatch(encoder, listedPlanKernel(LISTED_CAPS), chunks, [b.listed as GPUBuffer, grids], {
        n: chunks,
        aux0: this.chunk,
        aux1: this.lockedTile,
      });
    }
    for (let at = start, c = 0; at < end; at += this.chunk, c++) {
      const n = Math.min(this.chunk, end - at);
      // Pass k's grid of this chunk, when planned on the device.
      const planned = (k: number) => (grids ? { buffer: grids, offset: (c * PLAN_WORDS + 3 * k) * 4 } : undefined);
      // The deferred and freed lists are consumed within a chunk.
      if (at > start) encoder.clearBuffer(s.lists, 0, 2 * 4);
      const fields = { n, mode: b.mode, aux1: at, aux2: b.listed ? 1 : 0 };
      this.dispatch(encoder, opPassKernel(this.subgroups), n, bindings, fields, {
        timestampWrites: at === start ? first : undefined,
        maxWorkgroups: b.listed ? LISTED_WORKGROUPS : undefined,
        indirect: planned(0),
      });
      this.dispatch(
        encoder,
        releaseKernel(),
        n,
        [s.slots, s.meta, s.lists],
        { n },
        { maxWorkgroups: RELEASE_WORKGROUPS, indirect: planned(1) },
      );
      this.dispatch(encoder, lockedPassKernel(this.subgroups, this.lockedTile), n, bindings, fields, {
        maxWorkgroups: LOCKED_WORKGROUPS,
        timestampWrites: at + n === end ? last : undefined,
        indirect: planned(2),
      });
    }
  }

  /**
   * An insert batch by the bulk build (wgsl/bulk.ts): partition by region, build each region in
   * workgroup memory, then the op passes over the keys it spilled. Reserved keys are reported
   * in the failed list, as pass A reports them. With timestamp writes, the count pass writes the
   * beginning and the last pass B the end.
   */
  encodeBulkInsert(encoder: GPUCommandEncoder, b: OpBatch, scratch: BulkScratch, timestampWrites?: GPUComputePassTimestampWrites): void {
    const s = this.storage;
    const { n, keys, values } = b;
    const regions = scratch.regions;
    s.ensureLists(Math.min(n, this.chunk));
    encoder.clearBuffer(s.lists, 0, LIST_HEADER * 4);
    encoder.clearBuffer(scratch.counts, 0, regions * 4);
    encoder.clearBuffer(scratch.spill, 0, 4);
    const [first, last] = splitTimestamps(timestampWrites);
    this.dispatch(encoder, bulkCountKernel(), n, [keys, scratch.counts], { n }, { timestampWrites: first });
    encodeExclusiveScan(this.gpu, encoder, scratch.counts, scratch.cursors, regions);
    this.dispatch(encoder, bulkScatterKernel(), n, [keys, values, scratch.cursors, scratch.records, s.lists], { n });
    this.dispatch(
      encoder,
      bulkBuildKernel(),
      regions * WORKGROUP_SIZE,
      [s.slots, s.meta, scratch.records, scratch.cursors, s.counters, scratch.spill],
      { n: regions, mode: b.mode, aux0: this.buckets },
    );
    this.encodeOpPasses(encoder, { keys, values, n, mode: b.mode, listed: scratch.spill, grids: scratch.grids }, last);
  }

  /** Moves stash keys into the table where they now fit (after every resize): the locked pass over the stash slots. */
  encodeDrain(encoder: GPUCommandEncoder): void {
    const s = this.storage;
    const jobs = s.stashLines * BUCKET_SLOTS;
    const bindings = [s.slots, s.meta, s.dummyRead, s.dummyRead, s.dummyRead, s.dummyOut, s.counters, s.lists];
    this.dispatch(encoder, lockedPassKernel(this.subgroups, this.lockedTile), jobs, bindings, { n: jobs, mode: MODE_DRAIN });
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
