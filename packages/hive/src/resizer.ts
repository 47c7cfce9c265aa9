import { type Gpu, InternalError } from '@gpuhash/core';
import type { Dispatcher } from './dispatcher';
import { afterSplits, BUCKET_SLOTS, bucketCount, stashLinesFor } from './split-pointer';
import { BUCKET_BYTES, type HiveStorage } from './storage';
import { Counter } from './wgsl/common';
import { mergeCheckKernel, mergeKernel, relocateStashKernel, splitKernel } from './wgsl/resize';

export interface ResizePolicy {
  maxLoadFactor: number;
  minLoadFactor: number;
  growth: boolean;
  resizeBatch: number;
}

/** What the resizer reads from the table: its counts as of the last read-back, and the read-back. */
export interface TableCounts {
  size(): number;
  stashSize(): number;
  refresh(): Promise<unknown>;
}

/**
 * Dynamic resizing by linear hashing (Hive IV-C): expansion splits K buckets per dispatch,
 * contraction merges K pairs per dispatch from the top, both between batches; storage is
 * reallocated (at least doubled) when the buckets outgrow it; the stash is drained after every
 * resize. The bucket count lives in the dispatcher, which every dispatch addresses with.
 */
export class Resizer {
  /** Automatic contraction never goes below this (create, reserve and shrinkToFit set it). */
  floor: number;
  readonly counts = { expansions: 0, contractions: 0, bucketsSplit: 0, bucketsMerged: 0, reallocations: 0 };

  constructor(
    private readonly gpu: Gpu,
    private readonly storage: HiveStorage,
    private readonly d: Dispatcher,
    private readonly policy: ResizePolicy,
    private readonly table: TableCounts,
  ) {
    this.floor = d.buckets;
  }

  /** Before a batch of up to `incoming` new keys: expand so it fits under the upper threshold. */
  async growFor(incoming: number): Promise<void> {
    if (!this.policy.growth) return;
    const needed = this.table.size() + incoming;
    if (needed <= this.policy.maxLoadFactor * this.d.buckets * BUCKET_SLOTS) return;
    await this.expandTo(Math.ceil(needed / (this.policy.maxLoadFactor * BUCKET_SLOTS)));
  }

  /** After erases: below the lower threshold, contract towards the middle of the two. */
  async contractIfSparse(): Promise<void> {
    const { growth, minLoadFactor, maxLoadFactor } = this.policy;
    const load = this.table.size() / (this.d.buckets * BUCKET_SLOTS);
    if (!growth || this.d.buckets <= this.floor || load >= minLoadFactor) return;
    const middle = (minLoadFactor + maxLoadFactor) / 2;
    await this.contractTo(Math.max(this.floor, Math.ceil(this.table.size() / (middle * BUCKET_SLOTS))));
  }

  /** Splits buckets (K per dispatch, never across a round) until the table has `target` (capped at the device's limit). */
  async expandTo(target: number): Promise<boolean> {
    const limit = this.storage.maxBuckets;
    const goal = Math.min(target, limit);
    if (goal <= this.d.buckets) return false;
    const s = this.storage;
    const encoder = this.gpu.device.createCommandEncoder();
    const retired: GPUBuffer[] = [];
    if (goal > s.nalloc) retired.push(...this.encodeReallocate(encoder, Math.min(limit, Math.max(goal, 2 * s.nalloc))));
    while (this.d.buckets < goal) {
      const p = this.d.splitPointer;
      const k = Math.min(this.policy.resizeBatch, p.n0 - p.split, goal - this.d.buckets);
      // Addresses as after the batch (split + k may equal n0: the round's end), sources from the old pointer.
      this.d.dispatch(
        encoder,
        splitKernel.variant({ subgroups: this.d.subgroups, ...s.windowing }),
        k,
        { slots: s.slots, masks: s.meta },
        {
          n: k,
          aux0: p.split,
          pointer: { n0: p.n0, split: p.split + k },
        },
      );
      this.d.buckets = bucketCount(afterSplits(p, k));
      this.counts.expansions++;
      this.counts.bucketsSplit += k;
    }
    this.d.encodeDrain(encoder);
    this.gpu.submit([encoder.finish()]);
    for (const b of retired) b.destroy();
    await this.table.refresh();
    return true;
  }

  /**
   * Merges buckets from the top (K pairs per dispatch) towards `target`; stops early where a
   * pair's keys do not fit its base bucket. Drains the stash afterwards.
   */
  async contractTo(target: number): Promise<void> {
    const s = this.storage;
    let changed = false;
    while (this.d.buckets > target) {
      const p = this.d.splitPointer;
      if (p.split === 0 && p.n0 === 1) break;
      // At a round's start the pairs are those of the previous round, all split.
      const n0 = p.split === 0 ? p.n0 / 2 : p.n0;
      const split = p.split === 0 ? n0 : p.split;
      const k = Math.min(this.policy.resizeBatch, split, this.d.buckets - target);
      const top = this.d.buckets - 1;
      const pointer = { n0, split };
      const encoder = this.gpu.device.createCommandEncoder();
      encoder.clearBuffer(s.counters, Counter.mergeMarker * 4, 4);
      const fields = { n: k, aux0: top, pointer };
      this.d.dispatch(encoder, mergeCheckKernel.variant(), k, { masks: s.meta, counters: s.counters }, fields);
      const merge = mergeKernel.variant({ subgroups: this.d.subgroups, ...s.windowing });
      this.d.dispatch(encoder, merge, k, { slots: s.slots, masks: s.meta, counters: s.counters }, fields);
      this.gpu.submit([encoder.finish()]);
      const marker = new Uint32Array(await this.gpu.readBytes(s.counters, Counter.mergeMarker * 4, 4))[0] as number;
      const next = marker > 0 ? marker : this.d.buckets - k;
      this.counts.contractions++;
      this.counts.bucketsMerged += this.d.buckets - next;
      if (next === this.d.buckets) break;
      this.d.buckets = next;
      changed = true;
    }
    if (!changed) return;
    const encoder = this.gpu.device.createCommandEncoder();
    this.d.encodeDrain(encoder);
    this.gpu.submit([encoder.finish()]);
    await this.table.refresh();
  }

  /** Reallocates the storage to exactly the table's buckets, when that frees memory and the stash is empty. */
  async fit(): Promise<void> {
    if (this.table.stashSize() !== 0 || this.storage.nalloc <= this.d.buckets) return;
    const encoder = this.gpu.device.createCommandEncoder();
    const retired = this.encodeReallocate(encoder, this.d.buckets);
    this.gpu.submit([encoder.finish()]);
    for (const b of retired) b.destroy();
  }

  /**
   * New storage for `nalloc` buckets: the table's buckets are copied, the stash's keys moved into
   * the new stash lines (which only grow here, unless the stash is empty). Returns the old buffers,
   * to destroy once the encoder is submitted.
   */
  private encodeReallocate(encoder: GPUCommandEncoder, nalloc: number): GPUBuffer[] {
    const s = this.storage;
    const lines = stashLinesFor(nalloc);
    if (lines < s.stashLines && this.table.stashSize() !== 0) throw new InternalError('hive: shrinking the stash while it holds keys');
    const { buffers: slots, windowing } = s.allocateSlots(nalloc);
    const meta = this.gpu.createBuffer(s.metaWords(nalloc) * 4, 'hive.meta');
    s.encodeEmpty(encoder, slots, meta, nalloc);
    const n = this.d.buckets;
    s.encodeCopySlots(encoder, s.slotBuffers, slots, n * BUCKET_BYTES);
    encoder.copyBufferToBuffer(s.meta, 0, meta, 0, n * 4);
    // The lock words carry the overflow bits (no lock is held between batches).
    encoder.copyBufferToBuffer(s.meta, s.lockBase * 4, meta, (nalloc + lines) * 4, n * 4);
    let retiredStash: GPUBuffer | undefined;
    if (lines >= s.stashLines) {
      // Relocation reads the old stash and writes the new one: params describe the new storage
      // (its stash lines; no key is addressed by the split pointer here).
      // The old stash lines are copied out first, so the kernel binds only the new windows.
      const jobs = s.stashLines * BUCKET_SLOTS;
      const oldStash = this.gpu.createBuffer(s.stashLines * BUCKET_BYTES, 'hive.old-stash');
      s.encodeCopySlots(encoder, s.slotBuffers, [oldStash], oldStash.size, s.nalloc * BUCKET_BYTES);
      relocateStashKernel.variant(windowing).encode(this.gpu, encoder, {
        buffers: { old_stash: oldStash, slots: windowing.windows === 1 ? (slots[0] as GPUBuffer) : slots, masks: meta },
        params: {
          n: jobs,
          n0: 1,
          split: 0,
          nalloc,
          stash_lines: lines,
          lock_base: 2 * nalloc + lines,
          list_cap: s.listCap,
          max_evict: this.d.maxEvictions,
        },
        invocations: jobs,
      });
      retiredStash = oldStash;
    }
    const retired = [...s.slotBuffers, s.meta, ...(retiredStash ? [retiredStash] : [])];
    s.slotBuffers = slots;
    s.windowing = windowing;
    s.meta = meta;
    s.nalloc = nalloc;
    s.stashLines = lines;
    this.counts.reallocations++;
    return retired;
  }
}
