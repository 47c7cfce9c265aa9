import { type Binding, BufferUsage, type Gpu, InternalError, STORAGE_USAGE } from '@gpuhash/core';
import type { HkvStorage } from './storage';
import type { ScorePolicy } from './types';
import { POLICY_CODES, type ValueVariant, valueWords } from './wgsl/common';
import { dedupeClaimKernel, dedupeMarkKernel } from './wgsl/dedupe';
import { eraseKernel } from './wgsl/erase';
import { findKernel } from './wgsl/find';
import type { GroupVariant } from './wgsl/group';
import { insertKernel } from './wgsl/insert';
import { rehashKernel } from './wgsl/rehash';
import { scanKernel } from './wgsl/scan';
import { UpdateMode, updateKernel } from './wgsl/update';
import {
  type CopyKind,
  copyKernel,
  evictedKernel,
  type ListSource,
  listHeadWords,
  listOffsetsKernel,
  listWords,
  partitionKernel,
} from './wgsl/windows';

/** A window of value buffers: the first buffer and how many. */
export interface Window {
  base: number;
  count: number;
}

/** What a find writes: one found word per key, and values and scores when given. */
export interface FindOutputs {
  found: GPUBuffer;
  values?: GPUBuffer;
  scores?: GPUBuffer;
  /** Leave each key's slot (NONE when absent) in `found` instead of a 0/1 flag (the host tier). */
  slots?: boolean;
}

/** One batch of a multi-batch find. */
export interface FindBatch {
  keys: GPUBuffer;
  n: number;
  out: FindOutputs;
}

/** A batch's window lists: a range of the engine's lists buffer. */
interface ListRegion {
  buffer: GPUBuffer;
  offset: number;
  size: number;
}

/** One listed batch's copies into or out of every window past the first. */
interface CopyJob {
  n: number;
  region: ListRegion;
  /** The first window listed (1: the main pass served the first window; 0: it copied no values). */
  first: number;
  kind: CopyKind;
  vals: GPUBuffer;
  /** Pass label of the timestamp writes. */
  label: string;
  /**
   * The listed keys of an insertOrAssign's passes together (scatter): when its out buffer's hazard
   * word says a later pass may have evicted a key an earlier one placed, copy only where the slot
   * still holds the listed key (the table's keys, the batch's keys, the out buffer).
   */
  check?: { keys: GPUBuffer; batch: GPUBuffer; out: GPUBuffer };
}

/**
 * Where the passes of an upsert take their list regions (one per partition, in encoding order)
 * and leave their copies, when several batches share each window's copy passes.
 */
interface SharedCopies {
  regions: (ListRegion | undefined)[];
  copies: CopyJob[];
}

/** One batch of a multi-batch upsert. */
export interface UpsertBatch {
  staged: StagedUpsert;
  out: GPUBuffer;
  plan: UpsertPlan;
}

/** Timestamp writes for each compute pass of an operation (undefined: that pass untimed). */
export type PassTimer = (pass: string) => GPUComputePassTimestampWrites | undefined;

/** Workgroups of a partition pass (grid-strided: fewer workgroups, fewer counter atomics). */
const LIST_WORKGROUPS = 1024;
/** Workgroups of a window's copy pass (grid-strided over a length only the device knows). */
const COPY_WORKGROUPS = 4096;

/** Words before the per-key statuses in an out buffer (counters; word 1 receives the live count). */
export const OUT_HEAD = 4;

/** The device half of an insert-like batch: keys, scores and flags in `batch`, values in `values`. */
export interface StagedUpsert {
  n: number;
  /** [keys: 2n words][scores: 2n words][flags: n words]. */
  batch: GPUBuffer;
  /** n * dim floats (unused by assignScores and findOrInsert's touch... but always bound where read). */
  values: GPUBuffer;
  hasScores: boolean;
}

export interface UpsertPlan {
  mode: number;
  evict: boolean;
  dedupe: boolean;
  /** The clock value of the batch's first key (LRU scores). */
  clock: number;
  epoch: number;
  /** Insert passes (the later ones retry keys left busy). */
  insertPasses: number;
}

/** Words per evicted or exported entry in an out buffer: key, score, slot. */
export const EV_WORDS = 5;

/** The words an upsert's out buffer needs: head, statuses, slots, and 5 per evicted entry when evicting. */
export function outWords(n: number, evict: boolean): number {
  return OUT_HEAD + 2 * n + (evict ? EV_WORDS * n : 0);
}

/** Whether an upsert's update pass writes values (all modes but assignScores and findOrInsert's touch). */
function upsertWritesValues(plan: UpsertPlan): boolean {
  return plan.mode !== UpdateMode.assignScores && plan.mode !== UpdateMode.touch;
}

/** Whether an upsert runs insert passes (the modes that insert absent keys). */
function upsertInserts(plan: UpsertPlan): boolean {
  return plan.mode === UpdateMode.upsert || plan.mode === UpdateMode.accum || plan.mode === UpdateMode.touch;
}

/**
 * Whether an upsert's update pass is folded into its first insert pass (InsertVariant.lookup):
 * insertOrAssign, whose lookup and free-slot claim then share one read of the digest line.
 */
function foldsUpdate(plan: UpsertPlan): boolean {
  return plan.mode === UpdateMode.upsert;
}

/**
 * Whether an upsert's passes list and copy the values of every window once, after its last pass
 * (its insert passes then bind no values): folded upserts without eviction records (whose evicted
 * values must be read before each pass overwrites them).
 */
function copiesOnce(plan: UpsertPlan): boolean {
  return foldsUpdate(plan) && !plan.evict;
}

/** Encodes the kernels of every operation against one storage (the facade owns ordering and I/O). */
export class HkvEngine {
  private lists: GPUBuffer | undefined;
  /**
   * The most bytes of window lists one group of a multi-batch upsert lays out at once (rounded
   * down to a power of two and to the device's maxBufferSize); a batch needing more runs alone.
   */
  sharedListsBytes = 2 ** 31;

  constructor(
    private readonly gpu: Gpu,
    readonly policy: ScorePolicy,
    readonly dual: boolean,
    /** The cooperative kernels' groups: subgroup tiles of `tile` lanes, or one invocation per key. */
    readonly group: GroupVariant,
    /** Value buffers one kernel may bind: more are split into windows, each run by its own value passes. */
    readonly maxSlices: number = Number.POSITIVE_INFINITY,
    readonly windowBytes: number = Number.POSITIVE_INFINITY,
  ) {}

  /** The windows of value buffers: [first buffer, count], at most maxSlices and windowBytes each. */
  windows(storage: HkvStorage): Window[] {
    const out: Window[] = [];
    const total = storage.split.slices;
    const sliceBytes = storage.split.sliceSlots * storage.dim * 4;
    const per = Math.max(1, Math.min(total, this.maxSlices, Math.floor(this.windowBytes / sliceBytes)));
    for (let base = 0; base < total; base += per) out.push({ base, count: Math.min(per, total - base) });
    return out;
  }

  /** The value variant of one window (default: the first). */
  private values(storage: HkvStorage, w: Window = this.windows(storage)[0] as Window): ValueVariant {
    return { dim: storage.dim, slices: w.count, sliceSlots: storage.split.sliceSlots, deviceSlots: storage.deviceSlots, sliceBase: w.base };
  }

  /** The value buffers of one window (default: all of them), by binding name. */
  private sliceRecord(storage: HkvStorage, prefix = 'v', w: Window = { base: 0, count: storage.values.length }): Record<string, GPUBuffer> {
    return Object.fromEntries(storage.values.slice(w.base, w.base + w.count).map((b, s) => [`${prefix}${s}`, b]));
  }

  /** The first window's buffers (what the main kernels bind). */
  private firstSlices(storage: HkvStorage): Record<string, GPUBuffer> {
    return this.sliceRecord(storage, 'v', this.windows(storage)[0]);
  }

  private clockParams(storage: HkvStorage, n: number, clock: number, epoch: number) {
    return { n, mask: storage.mask, clock_lo: (clock % 2 ** 32) >>> 0, clock_hi: Math.floor(clock / 2 ** 32) >>> 0, epoch: epoch >>> 0 };
  }

  /**
   * An insert-like batch: clear its out buffer's head (and statuses, with dedupe), mark duplicates
   * (last wins), the update pass, then the insert passes (for modes that insert; insertOrAssign's
   * first insert pass does the updates, foldsUpdate). `out` needs `outWords(n, evict)` words;
   * `evVals` `n * dim` floats when evicting. Also copies the live count into out word 1.
   */
  encodeUpsert(
    encoder: GPUCommandEncoder,
    storage: HkvStorage,
    staged: StagedUpsert,
    out: GPUBuffer,
    evVals: GPUBuffer | undefined,
    plan: UpsertPlan,
    time?: PassTimer,
    shared?: SharedCopies,
  ): void {
    const { n } = staged;
    const deduped = plan.dedupe && n > 1;
    // The head words, and the statuses when the dedupe pass marks duplicates among them; the update
    // pass writes every other key's status, and slots and eviction records are written before any
    // pass reads them.
    encoder.clearBuffer(out, 0, (OUT_HEAD + (deduped ? n : 0)) * 4);
    let scratch: GPUBuffer | undefined;
    if (deduped) {
      let p = 2;
      while (p < 2 * n) p *= 2;
      const bytes = (2 * p + n) * 4;
      scratch = this.gpu.pool.acquire(bytes, STORAGE_USAGE, 'hkv.dedupe');
      encoder.clearBuffer(scratch, 0, 2 * p * 4);
      const opts = { buffers: { batch: staged.batch, scratch, out }, params: { n, pmask: p - 1 }, invocations: n };
      dedupeClaimKernel.variant().encode(this.gpu, encoder, { ...opts, timestampWrites: time?.('dedupe') });
      dedupeMarkKernel.variant().encode(this.gpu, encoder, { ...opts, timestampWrites: time?.('dedupe') });
    }
    const params = this.clockParams(storage, n, plan.clock, plan.epoch);
    const v = this.values(storage);
    const policy = POLICY_CODES[this.policy];
    const withValues = upsertWritesValues(plan);
    // The first insert-like batch after creation or a clear finds nothing: its update pass only
    // sorts the keys. Later batches look them up.
    const empty = storage.knownEmpty;
    storage.knownEmpty = false;
    // insertOrAssign folds its update pass into the first insert pass (InsertVariant.lookup).
    if (foldsUpdate(plan)) {
      const once = copiesOnce(plan);
      this.encodeInsertPass(encoder, storage, staged, out, evVals, plan, time, shared, { empty, deduped }, once);
      for (let pass = 0; pass < plan.insertPasses; pass++) {
        this.encodeInsertPass(encoder, storage, staged, out, evVals, plan, time, shared, undefined, once);
      }
      if (once && this.windows(storage).length > 1) {
        const check = { keys: storage.keys, batch: staged.batch, out };
        this.encodeWindowCopies(
          encoder,
          storage,
          n,
          { source: 'placed', src: out },
          { kind: 'scatter', vals: staged.values, check },
          'insert',
          time,
          shared,
          0,
        );
      }
      encoder.copyBufferToBuffer(storage.meta, storage.counterWord * 4, out, 4, 4);
      if (scratch) this.gpu.pool.release(scratch);
      return;
    }
    updateKernel
      .variant({ ...v, ...this.group, policy, hasScores: staged.hasScores, mode: plan.mode, dual: this.dual, empty, deduped })
      .encode(this.gpu, encoder, {
        buffers: bind({
          bucket_meta: storage.meta,
          keys: storage.keys,
          scores: storage.scores,
          batch: staged.batch,
          out,
          ...(withValues ? { in_vals: staged.values, ...this.firstSlices(storage) } : {}),
        }),
        params,
        invocations: n,
        timestampWrites: time?.('update'),
      });
    if (withValues) {
      // Values in further windows of buffers: the updated keys' values, to the slots the pass recorded.
      const kind = plan.mode === UpdateMode.accum ? 'accumulate' : 'scatter';
      this.encodeWindowCopies(encoder, storage, n, { source: 'updated', src: out }, { kind, vals: staged.values }, 'update', time, shared);
    }
    if (upsertInserts(plan)) {
      for (let pass = 0; pass < plan.insertPasses; pass++) this.encodeInsertPass(encoder, storage, staged, out, evVals, plan, time, shared);
    }
    encoder.copyBufferToBuffer(storage.meta, storage.counterWord * 4, out, 4, 4);
    if (scratch) this.gpu.pool.release(scratch);
  }

  /** Only the insert passes again, for keys left busy (statuses already in `out`). */
  encodeInsertRetry(
    encoder: GPUCommandEncoder,
    storage: HkvStorage,
    staged: StagedUpsert,
    out: GPUBuffer,
    evVals: GPUBuffer | undefined,
    plan: UpsertPlan,
  ): void {
    this.encodeInsertPass(encoder, storage, staged, out, evVals, plan);
    encoder.copyBufferToBuffer(storage.meta, storage.counterWord * 4, out, 4, 4);
  }

  /**
   * One insert pass, its claims released, and with several windows of value buffers the value
   * passes of the other windows: the evicted entries' values first (before the slots are
   * overwritten), then the placed keys' values.
   */
  private encodeInsertPass(
    encoder: GPUCommandEncoder,
    storage: HkvStorage,
    staged: StagedUpsert,
    out: GPUBuffer,
    evVals: GPUBuffer | undefined,
    plan: UpsertPlan,
    time?: PassTimer,
    shared?: SharedCopies,
    /** The first pass of an insertOrAssign, which looks its keys up and updates the present ones. */
    lookup?: { empty: boolean; deduped: boolean },
    /** Leave the values of other windows to one partition after the last pass (copiesOnce). */
    deferCopies = false,
  ): void {
    const n = staged.n;
    const windows = this.windows(storage);
    // Values in several windows, all copied after the last pass: this pass binds none of them.
    const bare = deferCopies && windows.length > 1;
    insertKernel
      .variant({
        ...this.values(storage),
        ...this.group,
        policy: POLICY_CODES[this.policy],
        hasScores: staged.hasScores,
        evict: plan.evict,
        dual: this.dual,
        windowed: windows.length > 1,
        lookup: lookup !== undefined,
        empty: lookup?.empty ?? false,
        deduped: lookup?.deduped ?? true,
        bare,
      })
      .encode(this.gpu, encoder, {
        buffers: bind({
          bucket_meta: storage.meta,
          keys: storage.keys,
          scores: storage.scores,
          batch: staged.batch,
          out,
          ...(plan.evict && evVals ? { ev_vals: evVals } : {}),
          ...(bare ? {} : { in_vals: staged.values, ...this.firstSlices(storage) }),
        }),
        params: this.clockParams(storage, n, plan.clock, plan.epoch),
        invocations: n,
        timestampWrites: time?.('insert'),
      });
    storage.encodeReleaseClaims(encoder);
    if (windows.length === 1 || deferCopies) return;
    const rest = windows.slice(1);
    if (plan.evict && evVals) {
      for (const w of rest) {
        evictedKernel.variant({ ...this.values(storage, w), ...this.group }).encode(this.gpu, encoder, {
          buffers: bind({ out, ev_vals: evVals, ...this.sliceRecord(storage, 'v', w) }),
          params: { n, rec: OUT_HEAD + 2 * n },
          invocations: n,
          timestampWrites: time?.('insert.evicted'),
        });
      }
    }
    this.encodeWindowCopies(
      encoder,
      storage,
      n,
      { source: 'placed', src: out },
      { kind: 'scatter', vals: staged.values },
      'insert',
      time,
      shared,
    );
  }

  /**
   * Upserts of several batches, each as encodeUpsert and in order, without eviction records. With
   * values in several windows, the copies of a group of batches run window by window, every batch
   * of the group back to back, as encodeFinds does: a window's pass pays its fixed cost once per
   * group rather than once per batch. The writes to any one slot keep their order (a slot lies in
   * one window, and there the copies run batch after batch, the update's before the insert
   * passes'), and nothing in between reads values (no eviction records).
   */
  encodeUpserts(encoder: GPUCommandEncoder, storage: HkvStorage, batches: readonly UpsertBatch[], time?: PassTimer): void {
    if (batches.some((b) => b.plan.evict)) throw new InternalError('HkvEngine.encodeUpserts: eviction records need their copies at once');
    if (this.windows(storage).length === 1) {
      for (const b of batches) this.encodeUpsert(encoder, storage, b.staged, b.out, undefined, b.plan, time);
      return;
    }
    // Each batch lists its keys once per partition: the update's (with values) and each insert
    // pass's, or once after its last pass (copiesOnce).
    const partitions = (b: UpsertBatch) =>
      copiesOnce(b.plan) ? 1 : (upsertWritesValues(b.plan) ? 1 : 0) + (upsertInserts(b.plan) ? b.plan.insertPasses : 0);
    const counts = batches.map((b) => Array<number>(partitions(b)).fill(b.staged.n));
    // A batch copying once lists every window (its passes bound no values).
    const firsts = batches.map((b) => Array<number>(partitions(b)).fill(copiesOnce(b.plan) ? 0 : 1));
    const layout = (group: readonly number[]) =>
      this.layoutRegions(
        storage,
        group.flatMap((k) => counts[k] as number[]),
        group.flatMap((k) => firsts[k] as number[]),
      );
    const listBytes = (group: readonly number[]) => layout(group).bytes;
    // A power of two: the pool rounds sizes up to one.
    const cap = 2 ** Math.floor(Math.log2(Math.min(this.sharedListsBytes, this.gpu.limits.maxBufferSize)));
    const groups: number[][] = [];
    for (let k = 0; k < batches.length; k++) {
      const last = groups.at(-1);
      if (last && listBytes([...last, k]) <= cap) last.push(k);
      else groups.push([k]);
    }
    // A batch whose lists alone pass the cap runs as encodeUpsert does, with the engine's own lists.
    const most = Math.max(0, ...groups.map(listBytes).filter((b) => b <= cap));
    const buffer = most > 0 ? this.gpu.pool.acquire(most, STORAGE_USAGE, 'hkv.window.shared-lists') : undefined;
    // Groups run one after the other on the queue, so each reuses the buffer.
    for (const group of groups) {
      const { regions, bytes } = layout(group);
      const shared: SharedCopies | undefined =
        buffer && bytes <= cap ? { regions: regions.map((r) => r && { buffer, ...r }), copies: [] } : undefined;
      for (const k of group) {
        const b = batches[k] as UpsertBatch;
        this.encodeUpsert(encoder, storage, b.staged, b.out, undefined, b.plan, time, shared);
      }
      if (shared) this.encodeCopies(encoder, storage, shared.copies, time);
    }
    if (buffer) this.gpu.pool.release(buffer);
  }

  /** find / contains: `found` one word per key; `values` n * dim floats; `scores` 2 words per key. */
  encodeFind(encoder: GPUCommandEncoder, storage: HkvStorage, keys: GPUBuffer, n: number, out: FindOutputs, time?: PassTimer): void {
    this.encodeFinds(encoder, storage, [{ keys, n, out }], time);
  }

  /**
   * Finds of several batches (each as encodeFind). With values in several windows, every batch is
   * looked up (values untouched) and listed by window first, then each window's copies run for all
   * the batches together: a window's pass pays a fixed cost for the memory it starts touching
   * (about 80 us a pass at dim 64 on an H100), so it is paid once per window rather than once per
   * window and batch.
   */
  encodeFinds(encoder: GPUCommandEncoder, storage: HkvStorage, batches: readonly FindBatch[], time?: PassTimer): void {
    const copies: CopyJob[] = [];
    const windowed = (b: FindBatch) => b.out.values !== undefined && this.windows(storage).length > 1;
    // With values in several windows the lookup pass binds none of them, so that the memory its
    // random reads span stays the digest lines and keys (random reads over more than 2-4 GiB run
    // several times slower), and every window's vectors, the first's too, come from the lists.
    const first = 0;
    const regions = this.listRegions(
      storage,
      batches.map((b) => (b.out.values ? b.n : 0)),
      first,
    );
    batches.forEach((b, k) => {
      const { keys, n, out } = b;
      const scores = out.scores !== undefined;
      const values = out.values !== undefined && !windowed(b);
      findKernel
        .variant({ ...this.values(storage), ...this.group, values, scores, dual: this.dual, slots: (out.slots ?? false) || windowed(b) })
        .encode(this.gpu, encoder, {
          buffers: bind({
            bucket_meta: storage.meta,
            keys: storage.keys,
            qkeys: keys,
            found: out.found,
            ...(scores ? { scores: storage.scores, out_scores: out.scores as GPUBuffer } : {}),
            ...(values ? { out_vals: out.values as GPUBuffer, ...this.firstSlices(storage) } : {}),
          }),
          params: { n, mask: storage.mask },
          invocations: n,
          timestampWrites: time?.('find'),
        });
      // Values in several windows: list the keys by the window of the slot the find recorded (the
      // slots then turn into flags); the copies follow, window by window, for every batch at once.
      const region = regions[k];
      if (windowed(b) && region) {
        this.encodePartition(
          encoder,
          storage,
          n,
          { source: 'found', src: out.found, flags: !(out.slots ?? false) },
          region,
          'find',
          time,
          first,
        );
        copies.push({ n, region, first, kind: 'gather', vals: out.values as GPUBuffer, label: 'find' });
      }
    });
    this.encodeCopies(encoder, storage, copies, time);
  }

  /**
   * Where each batch's window lists go in the engine's lists buffer (ranges aligned for binding), or
   * none when the values lie in one window. `counts[k]` 0: batch k has no list.
   */
  private listRegions(storage: HkvStorage, counts: readonly number[], first = 1): (ListRegion | undefined)[] {
    if (this.windows(storage).length === 1) return [];
    const { regions, bytes } = this.layoutRegions(storage, counts, first);
    const buffer = this.listsBuffer(Math.max(bytes, 4));
    return regions.map((r) => r && { buffer, ...r });
  }

  /** The ranges of lists for batches of `counts` keys, one after the other (aligned for binding), and their bytes. */
  private layoutRegions(
    storage: HkvStorage,
    counts: readonly number[],
    /** The first window each list region covers (one for all, or one per count). */
    first: number | readonly number[] = 1,
  ): { regions: ({ offset: number; size: number } | undefined)[]; bytes: number } {
    const windows = this.windows(storage).length;
    const align = this.gpu.limits.minStorageBufferOffsetAlignment;
    let at = 0;
    const regions = counts.map((n, k) => {
      if (n === 0) return undefined;
      const size = listWords(windows - (typeof first === 'number' ? first : (first[k] as number)), n) * 4;
      const region = { offset: at, size };
      at += Math.ceil(size / align) * align;
      return region;
    });
    return { regions, bytes: at };
  }

  /**
   * Lists one batch's keys by the window of the slot the main pass recorded (partitionKernel; `src`
   * the find's slots or an upsert's out buffer) into `region`.
   */
  private encodePartition(
    encoder: GPUCommandEncoder,
    storage: HkvStorage,
    n: number,
    keys: { source: ListSource; src: GPUBuffer; flags?: boolean },
    region: ListRegion,
    label: string,
    time?: PassTimer,
    first = 1,
  ): void {
    const windows = this.windows(storage);
    const lists = windows.length - first;
    encoder.clearBuffer(region.buffer, region.offset, listHeadWords(lists) * 4);
    const partition = {
      source: keys.source,
      lists,
      first,
      sliceSlots: storage.split.sliceSlots,
      perWindow: (windows[0] as Window).count,
      deviceSlots: storage.deviceSlots,
      flags: keys.flags ?? false,
    };
    const pass = (phase: 'count' | 'list') =>
      partitionKernel.variant({ ...partition, phase }).encode(this.gpu, encoder, {
        buffers: { src: keys.src, lists: region },
        params: { n },
        invocations: n,
        maxWorkgroups: LIST_WORKGROUPS,
        timestampWrites: time?.(`${label}.lists`),
      });
    pass('count');
    listOffsetsKernel.variant({ lists }).encode(this.gpu, encoder, { buffers: { lists: region }, invocations: 1 });
    pass('list');
  }

  /** The copy passes of the listed windows (past the first, or all), window by window, each over every listed batch. */
  private encodeCopies(encoder: GPUCommandEncoder, storage: HkvStorage, batches: readonly CopyJob[], time?: PassTimer): void {
    const windows = this.windows(storage);
    const quads = valueWords(storage.dim).quads;
    windows.forEach((w, index) => {
      for (const b of batches) {
        if (index < b.first) continue;
        const lists = windows.length - b.first;
        copyKernel.variant({ ...this.values(storage, w), lists, kind: b.kind, checked: b.check !== undefined }).encode(this.gpu, encoder, {
          buffers: bind({
            lists: b.region,
            [b.kind === 'gather' ? 'out_vals' : 'in_vals']: b.vals,
            ...(b.check ? { keys: b.check.keys, batch: b.check.batch, status: b.check.out } : {}),
            ...this.sliceRecord(storage, 'v', w),
          }),
          params: { list: index - b.first },
          invocations: b.n * (quads ? storage.dim / 4 : storage.dim),
          maxWorkgroups: COPY_WORKGROUPS,
          timestampWrites: time?.(`${b.label}.values`),
        });
      }
    });
  }

  /**
   * The value passes of an upsert's windows past the first: its keys listed, then the copies (or,
   * with `shared`, listed into the next shared region and the copies left for later).
   */
  private encodeWindowCopies(
    encoder: GPUCommandEncoder,
    storage: HkvStorage,
    n: number,
    keys: { source: ListSource; src: GPUBuffer },
    copy: { kind: CopyKind; vals: GPUBuffer; check?: CopyJob['check'] },
    label: string,
    time?: PassTimer,
    shared?: SharedCopies,
    /** The first window listed: 1, or 0 when the passes before bound no values. */
    first = 1,
  ): void {
    const region = shared ? shared.regions.shift() : this.listRegions(storage, [n], first)[0];
    if (!region) return;
    this.encodePartition(encoder, storage, n, keys, region, label, time, first);
    const job = { n, region, first, ...copy, label };
    if (shared) shared.copies.push(job);
    else this.encodeCopies(encoder, storage, [job], time);
  }

  /**
   * The window lists' buffer, kept for the engine's life: batches encoded back to back reuse it
   * (their passes run in order), where a pooled buffer per batch would only come back after the
   * submit. A larger batch swaps in a larger one.
   */
  private listsBuffer(bytes: number): GPUBuffer {
    if (this.lists === undefined || this.lists.size < bytes) {
      if (this.lists) this.gpu.pool.release(this.lists);
      this.lists = this.gpu.pool.acquire(bytes, STORAGE_USAGE, 'hkv.window.lists');
    }
    return this.lists;
  }

  /** Gives the engine's own buffers back. */
  destroy(): void {
    if (this.lists) this.gpu.pool.release(this.lists);
    this.lists = undefined;
  }

  /** erase: out word 0 counts the keys erased, word 1 receives the live count. */
  encodeErase(encoder: GPUCommandEncoder, storage: HkvStorage, keys: GPUBuffer, n: number, out: GPUBuffer): void {
    encoder.clearBuffer(out, 0, OUT_HEAD * 4);
    eraseKernel.variant({ dual: this.dual }).encode(this.gpu, encoder, {
      buffers: { bucket_meta: storage.meta, keys: storage.keys, scores: storage.scores, qkeys: keys, out },
      params: { n, mask: storage.mask },
      invocations: n,
    });
    storage.encodeReleaseClaims(encoder);
    encoder.copyBufferToBuffer(storage.meta, storage.counterWord * 4, out, 4, 4);
  }

  /** eraseIf (`evVals` undefined) or export over slots [offset, offset + count). */
  encodeScan(
    encoder: GPUCommandEncoder,
    storage: HkvStorage,
    range: { offset: number; count: number },
    predicate: { kmask: [number, number]; kval: [number, number]; smin: [number, number]; smax: [number, number] },
    out: GPUBuffer,
    evVals: GPUBuffer | undefined,
  ): void {
    encoder.clearBuffer(out, 0, OUT_HEAD * 4);
    const exporting = evVals !== undefined;
    scanKernel.variant({ ...this.values(storage), export: exporting }).encode(this.gpu, encoder, {
      buffers: bind({
        bucket_meta: storage.meta,
        keys: storage.keys,
        scores: storage.scores,
        out,
        ...(exporting ? { ev_vals: evVals as GPUBuffer, ...this.firstSlices(storage) } : {}),
      }),
      params: {
        offset: range.offset,
        count: range.count,
        mask: storage.mask,
        kmask_lo: predicate.kmask[0],
        kmask_hi: predicate.kmask[1],
        kval_lo: predicate.kval[0],
        kval_hi: predicate.kval[1],
        smin_lo: predicate.smin[0],
        smin_hi: predicate.smin[1],
        smax_lo: predicate.smax[0],
        smax_hi: predicate.smax[1],
      },
      invocations: Math.max(range.count, 1),
    });
    if (exporting) {
      for (const w of this.windows(storage).slice(1)) {
        evictedKernel.variant({ ...this.values(storage, w), ...this.group }).encode(this.gpu, encoder, {
          buffers: bind({ out, ev_vals: evVals as GPUBuffer, ...this.sliceRecord(storage, 'v', w) }),
          params: { n: Math.max(range.count, 1), rec: OUT_HEAD },
          invocations: Math.max(range.count, 1),
        });
      }
    }
    encoder.copyBufferToBuffer(storage.meta, storage.counterWord * 4, out, 4, 4);
  }

  /** Moves every entry of `from` into `to` (twice the buckets; cleared), and the live count. */
  encodeRehash(encoder: GPUCommandEncoder, from: HkvStorage, to: HkvStorage): void {
    rehashKernel
      .variant({
        dim: from.dim,
        oldSlices: from.split.slices,
        oldSliceSlots: from.split.sliceSlots,
        slices: to.split.slices,
        sliceSlots: to.split.sliceSlots,
      })
      .encode(this.gpu, encoder, {
        buffers: bind({
          okeys: from.keys,
          oscores: from.scores,
          bucket_meta: to.meta,
          keys: to.keys,
          scores: to.scores,
          ...this.sliceRecord(from, 'u'),
          ...this.sliceRecord(to),
        }),
        params: { buckets: from.buckets, mask: to.mask },
        invocations: from.buckets,
      });
    encoder.copyBufferToBuffer(from.meta, from.counterWord * 4, to.meta, to.counterWord * 4, 4);
  }
}

/**
 * Buffers by binding name for a kernel whose bindings depend on its variant (value buffers,
 * optional outputs): the variant's layout checks the names when the pass is encoded.
 */
function bind(record: Record<string, Binding>): never {
  return record as never;
}

/** A pooled scratch buffer for batches (storage, copy in and out). */
export function scratchBuffer(gpu: Gpu, bytes: number, label: string): GPUBuffer {
  return gpu.pool.acquire(Math.max(16, bytes), STORAGE_USAGE | BufferUsage.COPY_SRC, label);
}
