import {
  DestroyedError,
  DeviceArray,
  describeValue,
  type Gpu,
  InternalError,
  InvalidArgumentError,
  integerIn,
  LimitExceededError,
  oneOf,
  positiveInteger,
  u64FromWords,
} from '@gpuhash/core';
import {
  EV_WORDS,
  HkvEngine,
  OUT_HEAD,
  outWords,
  type PassTimer,
  type StagedUpsert,
  scratchBuffer,
  type UpsertBatch,
  type UpsertPlan,
} from './engine';
import { applyHostTier } from './host-tier';
import { bigWords, checkValues, hostKeyWords, keyCount, scoreWords } from './input';
import { BUCKET_SLOTS, roundCapacity, valueSplit } from './layout';
import { HkvStorage } from './storage';
import {
  type DeviceUpsertBatch,
  type EntryPredicate,
  type EvictResult,
  type ExportResult,
  type FindResult,
  type HkvOptions,
  type HkvStats,
  HkvStatus,
  type KeysInput,
  type ScorePolicy,
  type ScoresInput,
  type UpsertResult,
  type ValuesInput,
} from './types';
import { UpdateMode } from './wgsl/update';
import { MAX_WINDOW_LISTS } from './wgsl/windows';

const OWN_OPTIONS = [
  'capacity',
  'dim',
  'maxCapacity',
  'maxLoadFactor',
  'policy',
  'mode',
  'assumeUniqueKeys',
  'maxValueBufferBytes',
  'valueWindowBytes',
  'maxDeviceBytesForValues',
  'subgroups',
  'tile',
];
/**
 * Lanes per cooperative group unless the options say otherwise. 4 against 8 on an H100 (2^27
 * slots; a lane loads every digest quad it covers before matching any): inserts 5% faster at dim 1
 * and load 1.0, finds 6-14% faster, hits and misses, at dims 1 and 32, and the update pass's
 * lookups 10% faster at dim 32 (apps/bench/results/hkv/2026-11-26-h100-hkv-value-windows.md).
 */
const DEFAULT_TILE = 4;
/**
 * Values one pass touches unless the options say otherwise (see HkvOptions.valueWindowBytes): 2 GiB,
 * or 4 GiB for vectors of 256 bytes or more. A pass's random row reads cost by the pages they touch,
 * which longer rows share among more bytes. On an H100 (2^27 slots, load 0.5, every find batch
 * keeping its answers), 4 GiB windows made dim-64 finds 12% faster (half the copy passes) and
 * dim-32 finds 28% slower (apps/bench/results/hkv/2026-11-26-h100-hkv-value-windows.md).
 */
function defaultValueWindowBytes(dim: number): number {
  return dim * 4 >= 256 ? 4 * 2 ** 30 : 2 * 2 ** 30;
}
const NONE = 0xffffffff;
const POLICIES: ScorePolicy[] = ['lru', 'lfu', 'epochLru', 'epochLfu', 'custom'];
/** Storage bindings of the busiest kernel besides the value buffers (insert with eviction). */
const FIXED_BINDINGS = 7;
/** Storage bindings of the growth pass besides the old and new value buffers. */
const REHASH_BINDINGS = 5;
/** Insert passes encoded with every batch; the host runs more only if keys were left busy. */
const INSERT_PASSES = 2;
const MAX_HOST_RETRIES = 8;
const MAX_U64 = (1n << 64n) - 1n;

/** findOrInsert's result: every key's value after the call, and whether it was present before. */
export interface FindOrInsertResult extends UpsertResult {
  values: Float32Array;
  /** 1 where the key was present (its stored value is returned), 0 where it was inserted (or refused). */
  found: Uint8Array;
}

/** One pending reader or updater batch, merged with the others of its group into one dispatch. */
interface GroupItem {
  /** Keys as (lo, hi) words. */
  words: Uint32Array;
  /** An updater's values and score words. */
  values?: Float32Array;
  scores?: Uint32Array;
  resolve: (r: unknown) => void;
  reject: (e: unknown) => void;
}
interface Group {
  kind: string;
  started: boolean;
  items: GroupItem[];
  /** Updaters: the keys of the group so far (lossy 53-bit codes), so a batch repeating one starts a new group. */
  seen?: Set<number>;
  /** Runs the merged items; one result per item. */
  run: (items: GroupItem[]) => Promise<unknown[]>;
}

/** A lossy 53-bit code of key i of `words`: equal keys give equal codes (a collision only stops a merge). */
function keyCode(words: Uint32Array, i: number): number {
  return ((words[2 * i + 1] as number) & 0x1fffff) * 4294967296 + (words[2 * i] as number);
}

/**
 * Keys a group of merged host batches holds at most: merging pays off for many small batches, and
 * the group's keys go in a Set (V8's hold at most 2^24 entries). Larger batches run on their own.
 */
const MERGE_MAX_KEYS = 2 ** 22;

/** The updater modes whose host batches merge with the next ones of the same mode (no inserts). */
const MERGED_UPDATES: readonly number[] = [UpdateMode.assign, UpdateMode.assignValues, UpdateMode.assignScores];

/**
 * HierarchicalKV on WebGPU: a GPU cache of `dim`-float vectors under u64 keys. Each key belongs to
 * one 128-slot bucket; a full bucket is the steady state, and an insert into it evicts the
 * bucket's minimum-score entry, or (custom scores) is refused when it scores below that minimum.
 * Operations are batched and run in call order; consecutive find/contains calls (and consecutive
 * assign calls of one kind) made without awaiting in between run as one dispatch.
 */
export class HkvCache {
  readonly gpu: Gpu;
  readonly dim: number;
  readonly policy: ScorePolicy;
  /** 'single' or 'dual' (two candidate buckets per key). */
  readonly mode: 'single' | 'dual';
  readonly maxCapacity: number;
  readonly maxLoadFactor: number;
  readonly assumeUniqueKeys: boolean;
  private storage: HkvStorage;
  private readonly engine: HkvEngine;
  private readonly valueBufferBytes: number;
  private destroyed = false;
  private liveCount = 0;
  private clock = 0;
  private epochValue = 0;
  private tail: Group | undefined;

  /** The host tier: values of slots from `storage.deviceSlots` up (undefined: every value on the device). */
  private host: Float32Array | undefined;

  private constructor(gpu: Gpu, options: Required<HkvOptions>, valueBufferBytes: number, maxSlices: number) {
    this.gpu = gpu;
    this.dim = options.dim;
    this.policy = options.policy;
    this.mode = options.mode;
    this.maxCapacity = options.maxCapacity;
    this.maxLoadFactor = options.maxLoadFactor;
    this.assumeUniqueKeys = options.assumeUniqueKeys;
    this.valueBufferBytes = valueBufferBytes;
    // Groups never span more than the smallest subgroup the device may run (the kernels take the
    // group size as a constant); without subgroups each invocation is its own group.
    const cap = (t: number) => (options.subgroups ? Math.max(1, Math.min(t, gpu.subgroups.minSize)) : 1);
    this.engine = new HkvEngine(
      gpu,
      options.policy,
      options.mode === 'dual',
      { subgroups: options.subgroups, tile: cap(options.tile) },
      maxSlices,
      options.valueWindowBytes,
    );
    const deviceSlots = Math.min(
      options.capacity,
      Math.floor(options.maxDeviceBytesForValues / (options.dim * 4 * BUCKET_SLOTS)) * BUCKET_SLOTS,
    );
    // A fixed-capacity cache splits value buffers past one kernel's bindings into windows; a growing
    // one is checked against the bindings of the growth pass at create.
    this.storage = new HkvStorage(gpu, options.capacity, options.dim, valueBufferBytes, Number.POSITIVE_INFINITY, deviceSlots);
    if (deviceSlots < options.capacity) this.host = new Float32Array((options.capacity - deviceSlots) * options.dim);
  }

  /** Creates a cache, cleared. Throws InvalidArgumentError on a bad option, LimitExceededError past the device's limits. */
  static async create(gpu: Gpu, options: HkvOptions): Promise<HkvCache> {
    const where = 'HkvCache.create';
    if (options === null || typeof options !== 'object') {
      throw new InvalidArgumentError(
        `${where}: options must be an object such as { capacity: 1 << 20, dim: 16 }, got ${describeValue(options)}`,
      );
    }
    for (const key of Object.keys(options)) {
      if ((options as unknown as Record<string, unknown>)[key] !== undefined && !OWN_OPTIONS.includes(key)) {
        throw new InvalidArgumentError(`${where}: unknown option '${key}' (the options are ${OWN_OPTIONS.join(', ')})`);
      }
    }
    positiveInteger(where, 'capacity', options.capacity);
    integerIn(where, 'dim', options.dim, 1, 1024);
    const capacity = roundCapacity(options.capacity);
    const maxCapacity = roundCapacity(options.maxCapacity ?? capacity);
    if (options.maxCapacity !== undefined) positiveInteger(where, 'maxCapacity', options.maxCapacity);
    if (maxCapacity < capacity)
      throw new InvalidArgumentError(`${where}: maxCapacity (${options.maxCapacity}) is below capacity (${options.capacity})`);
    if (maxCapacity > 2 ** 32) throw new InvalidArgumentError(`${where}: at most 2^32 slots, got maxCapacity ${maxCapacity}`);
    const maxLoadFactor = options.maxLoadFactor ?? 0.5;
    if (!(typeof maxLoadFactor === 'number' && maxLoadFactor > 0 && maxLoadFactor <= 1)) {
      throw new InvalidArgumentError(`${where}: maxLoadFactor must be a number in (0, 1], got ${String(maxLoadFactor)}`);
    }
    const policy = options.policy ?? 'lru';
    oneOf(where, 'policy', policy, POLICIES);
    const mode = options.mode ?? 'single';
    oneOf(where, 'mode', mode, ['single', 'dual']);
    if (mode === 'dual' && capacity < 2 * BUCKET_SLOTS) {
      throw new InvalidArgumentError(`${where}: dual-bucket mode needs at least two buckets (capacity 256), got ${options.capacity}`);
    }
    if (mode === 'dual' && maxCapacity !== capacity) {
      throw new InvalidArgumentError(
        `${where}: dual-bucket mode has a fixed capacity; leave maxCapacity out (a key's second bucket moves when the bucket count changes)`,
      );
    }
    const assumeUniqueKeys = options.assumeUniqueKeys ?? false;
    oneOf(where, 'assumeUniqueKeys', assumeUniqueKeys, [true, false]);
    let maxDeviceBytesForValues = Number.MAX_SAFE_INTEGER;
    if (options.maxDeviceBytesForValues !== undefined) {
      const b = options.maxDeviceBytesForValues;
      if (!(typeof b === 'number' && Number.isSafeInteger(b) && b >= 0)) {
        throw new InvalidArgumentError(`${where}: maxDeviceBytesForValues must be a non-negative integer, got ${String(b)}`);
      }
      maxDeviceBytesForValues = b;
      if (b < capacity * options.dim * 4 && maxCapacity !== capacity) {
        throw new InvalidArgumentError(
          `${where}: a cache with a host tier (maxDeviceBytesForValues) has a fixed capacity; leave maxCapacity out`,
        );
      }
    }
    const deviceBytes = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
    let valueBufferBytes = deviceBytes;
    if (options.maxValueBufferBytes !== undefined) {
      positiveInteger(where, 'maxValueBufferBytes', options.maxValueBufferBytes);
      valueBufferBytes = Math.min(deviceBytes, options.maxValueBufferBytes);
    }
    const subgroups = options.subgroups ?? gpu.subgroups.supported;
    oneOf(where, 'subgroups', subgroups, [true, false]);
    if (subgroups && !gpu.subgroups.supported)
      throw new InvalidArgumentError(`${where}: subgroups: true, but this device was created without the 'subgroups' feature`);
    const tile = options.tile ?? DEFAULT_TILE;
    oneOf(where, 'tile', tile, [1, 2, 4, 8, 16, 32]);
    const valueWindowBytes = options.valueWindowBytes ?? defaultValueWindowBytes(options.dim);
    positiveInteger(where, 'valueWindowBytes', valueWindowBytes);
    const maxSlices = gpu.limits.maxStorageBuffersPerShaderStage - FIXED_BINDINGS;
    if (maxCapacity > capacity) {
      // Growth moves every value from the old buffers to the new ones in one pass, which binds both.
      const top = valueSplit(maxCapacity, options.dim, valueBufferBytes).slices;
      const below = valueSplit(maxCapacity / 2, options.dim, valueBufferBytes).slices;
      const limit = gpu.limits.maxStorageBuffersPerShaderStage - REHASH_BINDINGS;
      if (top + below > limit) {
        throw new LimitExceededError(
          `${where}: growth to ${maxCapacity} slots of ${options.dim} floats`,
          'maxStorageBuffersPerShaderStage (value buffers of the growth pass)',
          top + below,
          limit,
          'Give a fixed capacity (maxCapacity = capacity: values past one kernel’s bindings are then handled in windows), a smaller maxCapacity or dim.',
        );
      }
    }
    // Allocated as one operation: out of memory is a GpuOutOfMemoryError here, with nothing kept.
    const cache = await gpu.allocate(
      where,
      () =>
        new HkvCache(
          gpu,
          {
            capacity,
            dim: options.dim,
            maxCapacity,
            maxLoadFactor,
            policy,
            mode,
            assumeUniqueKeys,
            maxValueBufferBytes: valueBufferBytes,
            valueWindowBytes,
            maxDeviceBytesForValues,
            subgroups,
            tile,
          },
          valueBufferBytes,
          maxSlices,
        ),
      (built) => built.destroy(),
    );
    const { windows } = cache.valueSplit;
    if (windows - 1 > MAX_WINDOW_LISTS) {
      cache.destroy();
      throw new LimitExceededError(
        `${where}: ${capacity} slots of ${options.dim} floats`,
        'windows of value buffers',
        windows,
        MAX_WINDOW_LISTS + 1,
        'Give a larger valueWindowBytes or maxValueBufferBytes.',
      );
    }
    await cache.clear();
    return cache;
  }

  /** Slots (buckets * 128). */
  get capacity(): number {
    return this.storage.capacity;
  }

  get buckets(): number {
    return this.storage.buckets;
  }

  /** Value buffers the values are split across, slots per buffer, and windows of buffers (passes over the values). */
  get valueSplit(): { slices: number; sliceSlots: number; windows: number } {
    return { ...this.storage.split, windows: this.engine.windows(this.storage).length };
  }

  /** The global epoch (the high word of epochLru and epochLfu scores). */
  get epoch(): number {
    return this.epochValue;
  }

  set epoch(value: number) {
    integerIn('HkvCache.epoch', 'epoch', value, 0, 0xffffffff);
    this.epochValue = value;
  }

  /** The logical clock: the LRU score the next key of an insert-like batch gets. */
  get clockValue(): number {
    return this.clock;
  }

  // ---- insert-like operations (the inserter role) ----

  /** Inserts or updates each key's value and score. Keys absent from a full bucket evict its minimum (or are refused). */
  insertOrAssign(keys: KeysInput, values: ValuesInput, scores?: ScoresInput): Promise<UpsertResult> {
    return this.upsert('insertOrAssign', UpdateMode.upsert, keys, values, scores, undefined, false) as Promise<UpsertResult>;
  }

  /** insertOrAssign, and the entries it evicted (keys, values, scores), compacted. */
  insertAndEvict(keys: KeysInput, values: ValuesInput, scores?: ScoresInput): Promise<EvictResult> {
    return this.upsert('insertAndEvict', UpdateMode.upsert, keys, values, scores, undefined, true) as Promise<EvictResult>;
  }

  /**
   * Returns each key's stored value, inserting the given one for keys that are absent (a hit
   * refreshes its score as an insert would).
   */
  findOrInsert(keys: KeysInput, values: ValuesInput, scores?: ScoresInput): Promise<FindOrInsertResult> {
    const where = 'HkvCache.findOrInsert';
    this.assertLive(where);
    const n = keyCount(keys, where);
    const words = keys instanceof DeviceArray ? undefined : hostKeyWords(keys, where);
    // Queued back to back: nothing called later runs between the insert and the find.
    const upserted = this.upsert('findOrInsert', UpdateMode.touch, keys, values, scores, undefined, false);
    const read = this.gpu.run(where, () => (words ? this.findWords(words, false) : this.findDevice(keys as DeviceArray<'u32'>, n)));
    return Promise.all([upserted, read]).then(([result, { values: out }]) => ({
      ...result,
      values: out,
      found: Uint8Array.from(result.status, (s) => (s === HkvStatus.found ? 1 : 0)),
    }));
  }

  /**
   * Per key, `accumulate[i]` 1: add values to a present key's vector (absent: ignored); 0: insert an
   * absent key (present: ignored), as NVIDIA's accum_or_assign.
   */
  accumOrAssign(keys: KeysInput, values: ValuesInput, accumulate: Uint8Array, scores?: ScoresInput): Promise<UpsertResult> {
    if (!(accumulate instanceof Uint8Array)) {
      throw new InvalidArgumentError(
        `HkvCache.accumOrAssign: accumulate must be a Uint8Array of one flag per key, got ${describeValue(accumulate)}`,
      );
    }
    return this.upsert('accumOrAssign', UpdateMode.accum, keys, values, scores, accumulate, false) as Promise<UpsertResult>;
  }

  /** Updates values and scores of present keys; absent keys are left alone (status missing). */
  assign(keys: KeysInput, values: ValuesInput, scores?: ScoresInput): Promise<UpsertResult> {
    return this.upsert('assign', UpdateMode.assign, keys, values, scores, undefined, false) as Promise<UpsertResult>;
  }

  /** Updates values of present keys (scores unchanged). */
  assignValues(keys: KeysInput, values: ValuesInput): Promise<UpsertResult> {
    return this.upsert('assignValues', UpdateMode.assignValues, keys, values, undefined, undefined, false) as Promise<UpsertResult>;
  }

  /** Updates scores of present keys (by the policy: the clock, an increment, or the given score). */
  assignScores(keys: KeysInput, scores?: ScoresInput): Promise<UpsertResult> {
    return this.upsert('assignScores', UpdateMode.assignScores, keys, undefined, scores, undefined, false) as Promise<UpsertResult>;
  }

  private needsScores(mode: number): boolean {
    return this.policy === 'custom' && mode !== UpdateMode.assignValues;
  }

  private async upsert(
    op: string,
    mode: number,
    keys: KeysInput,
    values: ValuesInput | undefined,
    scores: ScoresInput | undefined,
    flags: Uint8Array | undefined,
    evict: boolean,
  ): Promise<UpsertResult | EvictResult> {
    const where = `HkvCache.${op}`;
    this.assertLive(where);
    const n = keyCount(keys, where);
    const words = keys instanceof DeviceArray ? undefined : hostKeyWords(keys, where);
    const withValues = mode !== UpdateMode.assignScores;
    if (withValues) checkValues(values, n, this.dim, where);
    if (scores === undefined && this.needsScores(mode)) {
      throw new InvalidArgumentError(`${where}: the 'custom' policy needs a score per key (pass scores)`);
    }
    const scoreIn = scores === undefined ? undefined : scoreWords(scores, n, where);
    if (flags && flags.length !== n) throw new InvalidArgumentError(`${where}: keys has ${n} entries but accumulate has ${flags.length}`);
    // The batch's staging arrays: keys, scores and flags (5 words a key), statuses and slots (2, 7
    // with evictions), values (dim), evicted values (dim).
    this.assertBatchFits(where, n, Math.max(5, evict || this.host ? 7 : 2, withValues || evict ? this.dim : 0));
    const hostBatch = words !== undefined && !(values instanceof DeviceArray) && !(scoreIn instanceof DeviceArray);
    if (hostBatch && MERGED_UPDATES.includes(mode) && n > 0 && n <= MERGE_MAX_KEYS) {
      return this.joinUpdate(where, mode, words, values as Float32Array | undefined, scoreIn as Uint32Array | undefined);
    }
    this.tail = undefined;
    return this.gpu.run(where, () => this.runUpsert(where, mode, n, keys, words, values, scoreIn, flags, evict));
  }

  /**
   * Merges a host assign batch with the pending batches of the same kind (one dispatch; each call
   * gets its own statuses). A batch repeating a key of the pending ones starts a new group, so the
   * merged dispatch gives each call what it would get alone (LFU increments and statuses included).
   */
  private joinUpdate(where: string, mode: number, words: Uint32Array, values: Float32Array | undefined, scores: Uint32Array | undefined) {
    const n = words.length / 2;
    const kind = `update:${mode}:${scores ? 1 : 0}`;
    const tail = this.tail;
    let fresh = !(tail && tail.kind === kind && !tail.started && tail.seen);
    if (!fresh) {
      // A merged batch whose arrays would pass one binding starts a new group.
      const pending = (tail as Group).items.reduce((a, it) => a + it.words.length / 2, 0);
      const most = Math.min(MERGE_MAX_KEYS, Math.floor(this.gpu.limits.maxStorageBufferBindingSize / (4 * Math.max(7, this.dim))));
      if (pending + n > most) fresh = true;
    }
    if (!fresh) {
      const seen = (tail as Group).seen as Set<number>;
      for (let i = 0; i < n && !fresh; i++) if (seen.has(keyCode(words, i))) fresh = true;
    }
    const seen = fresh ? new Set<number>() : ((tail as Group).seen as Set<number>);
    for (let i = 0; i < n; i++) seen.add(keyCode(words, i));
    const dim = this.dim;
    return this.joinGroup<UpsertResult>(kind, { words, values, scores }, fresh, seen, async (items) => {
      const total = items.reduce((a, it) => a + it.words.length / 2, 0);
      const allWords = concatWords(items.map((it) => it.words));
      const allValues = values
        ? concatFloats(
            items.map((it) => it.values as Float32Array),
            total * dim,
          )
        : undefined;
      const allScores = scores ? concatWords(items.map((it) => it.scores as Uint32Array)) : undefined;
      const r = (await this.runUpsert(where, mode, total, allWords, allWords, allValues, allScores, undefined, false)) as UpsertResult;
      const out: UpsertResult[] = [];
      let at = 0;
      for (const it of items) {
        const k = it.words.length / 2;
        out.push(decodeStatus(Uint32Array.from(r.status.subarray(at, at + k))));
        at += k;
      }
      return out;
    });
  }

  private async runUpsert(
    where: string,
    mode: number,
    n: number,
    keys: KeysInput,
    words: Uint32Array | undefined,
    values: ValuesInput | undefined,
    scoreIn: Uint32Array | DeviceArray<'u32'> | undefined,
    flags: Uint8Array | undefined,
    evict: boolean,
  ): Promise<UpsertResult | EvictResult> {
    this.assertLive(where);
    if (n === 0) return emptyResult(evict, this.dim);
    const withValues = mode !== UpdateMode.assignScores;
    const inserts = mode === UpdateMode.upsert || mode === UpdateMode.accum || mode === UpdateMode.touch;
    if (inserts) await this.makeRoom(n);
    const gpu = this.gpu;
    const dim = this.dim;
    const batch = scratchBuffer(gpu, 5 * n * 4, 'hkv.batch');
    const inVals = scratchBuffer(gpu, n * dim * 4, 'hkv.values.in');
    // The host tier needs the evicted entries' slots to know each slot's last writer.
    const host = this.host;
    const evicting = evict || host !== undefined;
    const out = scratchBuffer(gpu, outWords(n, evicting) * 4, 'hkv.out');
    const evVals = evicting ? scratchBuffer(gpu, n * dim * 4, 'hkv.values.evicted') : undefined;
    try {
      const encoder = gpu.device.createCommandEncoder({ label: where });
      // Large host arrays go up through mapped staging buffers (Gpu.writeStaged), before the encoder's passes.
      if (words) await gpu.writeStaged(batch, words);
      else encoder.copyBufferToBuffer((keys as DeviceArray).buffer, 0, batch, 0, 8 * n);
      if (scoreIn instanceof Uint32Array) gpu.write(batch, scoreIn, 8 * n);
      else if (scoreIn) encoder.copyBufferToBuffer(scoreIn.buffer, 0, batch, 8 * n, 8 * n);
      if (flags)
        gpu.write(
          batch,
          Uint32Array.from(flags, (f) => (f ? 1 : 0)),
          16 * n,
        );
      if (withValues) {
        if (values instanceof DeviceArray) encoder.copyBufferToBuffer(values.buffer, 0, inVals, 0, 4 * n * dim);
        else await gpu.writeStaged(inVals, values as Float32Array);
      }
      const staged: StagedUpsert = { n, batch, values: inVals, hasScores: scoreIn !== undefined };
      const plan: UpsertPlan = {
        mode,
        evict: evicting,
        dedupe: !this.assumeUniqueKeys,
        clock: this.clock,
        epoch: this.epochValue,
        insertPasses: INSERT_PASSES,
      };
      this.engine.encodeUpsert(encoder, this.storage, staged, out, evVals, plan);
      gpu.submit([encoder.finish()]);
      this.clock += n;
      const headWords = OUT_HEAD + (host ? 2 * n : n);
      let head = new Uint32Array(await gpu.readBytes(out, 0, headWords * 4));
      for (let retry = 0; retry < MAX_HOST_RETRIES && head.subarray(OUT_HEAD, OUT_HEAD + n).includes(HkvStatus.busy); retry++) {
        const again = gpu.device.createCommandEncoder({ label: `${where} (retry)` });
        this.engine.encodeInsertRetry(again, this.storage, staged, out, evVals, plan);
        gpu.submit([again.finish()]);
        head = new Uint32Array(await gpu.readBytes(out, 0, headWords * 4));
      }
      this.liveCount = head[1] as number;
      const result = decodeStatus(head.subarray(OUT_HEAD, OUT_HEAD + n));
      if (!evicting) return result;
      const e = head[0] as number;
      if (e > n) throw new InternalError(`${where}: ${e} evictions reported for ${n} keys`);
      const meta = e > 0 ? new Uint32Array(await gpu.readBytes(out, (OUT_HEAD + 2 * n) * 4, EV_WORDS * 4 * e)) : new Uint32Array(0);
      const ev = e > 0 ? new Float32Array(await gpu.readBytes(evVals as GPUBuffer, 0, e * dim * 4)) : new Float32Array(0);
      if (host) {
        const rows =
          mode === UpdateMode.assignScores
            ? new Float32Array(0)
            : values instanceof DeviceArray
              ? await gpu.download(values as DeviceArray<'f32'>)
              : (values as Float32Array);
        const batchKeys = words ?? new Uint32Array(await gpu.readBytes((keys as DeviceArray).buffer, 0, 8 * n));
        applyHostTier(
          {
            mode,
            status: result.status,
            slots: head.subarray(OUT_HEAD + n, OUT_HEAD + 2 * n),
            keyWords: batchKeys,
            rows,
            evMeta: meta,
            evicted: e,
            evValues: ev,
          },
          host,
          dim,
          this.storage.deviceSlots,
        );
      }
      if (!evict) return result;
      return {
        ...result,
        evictedKeys: u64FromWords(meta, e, EV_WORDS, 0),
        evictedScores: u64FromWords(meta, e, EV_WORDS, 2),
        evictedValues: ev,
      } satisfies EvictResult;
    } finally {
      for (const b of [batch, inVals, out, evVals]) if (b) gpu.pool.release(b);
    }
  }

  // ---- readers ----

  /** Each key's value (zeros when absent), found flags, and scores when `withScores`. */
  find(keys: KeysInput, options: { withScores?: boolean } = {}): Promise<FindResult> {
    const where = 'HkvCache.find';
    this.assertLive(where);
    this.assertBatchFits(where, keyCount(keys, where), this.findKeyWords(true));
    if (keys instanceof DeviceArray) {
      const n = keyCount(keys, where);
      this.tail = undefined;
      return this.gpu.run(where, () => this.findDevice(keys, n, options.withScores ?? false));
    }
    const words = hostKeyWords(keys, where);
    const withScores = options.withScores ?? false;
    return this.joinGroup<FindResult>(`find:${withScores ? 1 : 0}`, { words }, false, undefined, this.findGroup(withScores, true));
  }

  /** 1 where the key is present. */
  async contains(keys: KeysInput): Promise<Uint8Array> {
    const where = 'HkvCache.contains';
    this.assertLive(where);
    this.assertBatchFits(where, keyCount(keys, where), this.findKeyWords(false));
    if (keys instanceof DeviceArray) {
      const n = keyCount(keys, where);
      this.tail = undefined;
      return this.gpu.run(where, async () => (await this.findDevice(keys, n, false, false)).found);
    }
    const words = hostKeyWords(keys, where);
    const r = await this.joinGroup<FindResult>('contains', { words }, false, undefined, this.findGroup(false, false));
    return r.found;
  }

  /**
   * Adds a host batch to the pending group of its kind (merged into one dispatch with the batches
   * called before it without an operation of another kind in between), or starts a new group
   * (always, with `fresh`). `run` runs the merged items and returns one result per item.
   */
  private joinGroup<R>(
    kind: string,
    batch: Pick<GroupItem, 'words' | 'values' | 'scores'>,
    fresh: boolean,
    seen: Set<number> | undefined,
    run: (items: GroupItem[]) => Promise<R[]>,
  ): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const item: GroupItem = { ...batch, resolve: resolve as (r: unknown) => void, reject };
      const tail = this.tail;
      if (!fresh && tail && tail.kind === kind && !tail.started) {
        tail.items.push(item);
        return;
      }
      const group: Group = { kind, started: false, items: [item], seen, run: run as (items: GroupItem[]) => Promise<unknown[]> };
      this.tail = group;
      this.gpu
        .run(`HkvCache.${kind.split(':')[0]}`, async () => {
          group.started = true;
          if (this.tail === group) this.tail = undefined;
          this.assertLive(`HkvCache.${kind.split(':')[0]}`);
          return group.run(group.items);
        })
        .then(
          (results) => {
            for (const [i, it] of group.items.entries()) it.resolve(results[i]);
          },
          (e) => {
            for (const it of group.items) it.reject(e);
          },
        );
    });
  }

  /** Words a key of a find batch takes in its largest array (keys, scores, values). */
  private findKeyWords(withValues: boolean): number {
    return Math.max(2, withValues ? this.dim : 1);
  }

  /**
   * Runs merged find/contains batches: one find over the concatenated keys, split per item (in runs
   * of items whose arrays fit one binding).
   */
  private findGroup(withScores: boolean, withValues: boolean) {
    const most = Math.floor(this.gpu.limits.maxStorageBufferBindingSize / (4 * this.findKeyWords(withValues)));
    return async (items: GroupItem[]): Promise<FindResult[]> => {
      const out: FindResult[] = [];
      for (let first = 0; first < items.length; ) {
        let end = first + 1;
        let keys = (items[first] as GroupItem).words.length / 2;
        while (end < items.length && keys + (items[end] as GroupItem).words.length / 2 <= most)
          keys += (items[end++] as GroupItem).words.length / 2;
        const run = items.slice(first, end);
        const r = await this.findWords(concatWords(run.map((it) => it.words)), withScores, withValues);
        let at = 0;
        for (const it of run) {
          const n = it.words.length / 2;
          out.push(sliceFind(r, at, n, this.dim));
          at += n;
        }
        first = end;
      }
      return out;
    };
  }

  private async findWords(words: Uint32Array, withScores: boolean, withValues = true): Promise<FindResult> {
    const n = words.length / 2;
    if (n === 0) return { values: new Float32Array(0), found: new Uint8Array(0), ...(withScores ? { scores: new BigUint64Array(0) } : {}) };
    const q = scratchBuffer(this.gpu, words.byteLength, 'hkv.find.keys');
    try {
      await this.gpu.writeStaged(q, words);
      return await this.findBuffer(q, n, withScores, withValues);
    } finally {
      this.gpu.pool.release(q);
    }
  }

  private async findDevice(keys: DeviceArray<'u32'>, n: number, withScores = false, withValues = true): Promise<FindResult> {
    if (n === 0) return { values: new Float32Array(0), found: new Uint8Array(0) };
    return this.findBuffer(keys.buffer, n, withScores, withValues);
  }

  private async findBuffer(q: GPUBuffer, n: number, withScores: boolean, withValues: boolean): Promise<FindResult> {
    const gpu = this.gpu;
    const found = scratchBuffer(gpu, n * 4, 'hkv.find.found');
    const values = withValues ? scratchBuffer(gpu, n * this.dim * 4, 'hkv.find.values') : undefined;
    const scores = withScores ? scratchBuffer(gpu, n * 8, 'hkv.find.scores') : undefined;
    try {
      const encoder = gpu.device.createCommandEncoder({ label: 'HkvCache.find' });
      // The kernels leave an absent key's row as it was; the host API answers zeros for it.
      if (values) encoder.clearBuffer(values, 0, n * this.dim * 4);
      const host = this.host;
      this.engine.encodeFind(encoder, this.storage, q, n, { found, values, scores, slots: host !== undefined });
      gpu.submit([encoder.finish()]);
      const [f, v, s] = await Promise.all([
        gpu.readBytes(found, 0, n * 4),
        values ? gpu.readBytes(values, 0, n * this.dim * 4) : Promise.resolve(undefined),
        scores ? gpu.readBytes(scores, 0, n * 8) : Promise.resolve(undefined),
      ]);
      const words = new Uint32Array(f);
      const flags = new Uint8Array(n);
      const out = v ? new Float32Array(v) : new Float32Array(0);
      if (host) {
        // The host tier: found is a slot (NONE: absent); gather the values of host-resident slots,
        // float by float (a subarray a row costs an object each, more than its floats).
        const d0 = this.storage.deviceSlots;
        const dim = this.dim;
        for (let i = 0; i < n; i++) {
          const g = words[i] as number;
          if (g === NONE) continue;
          flags[i] = 1;
          if (!v || g < d0) continue;
          const from = (g - d0) * dim;
          for (let j = 0; j < dim; j++) out[i * dim + j] = host[from + j] as number;
        }
      } else flags.set(words);
      return {
        values: out,
        found: flags,
        ...(s ? { scores: u64FromWords(new Uint32Array(s), n) } : {}),
      };
    } finally {
      for (const b of [found, values, scores]) if (b) gpu.pool.release(b);
    }
  }

  // ---- erase, scans ----

  /** Erases the keys present; returns how many distinct keys were erased. */
  erase(keys: KeysInput): Promise<number> {
    const where = 'HkvCache.erase';
    this.assertLive(where);
    const n = keyCount(keys, where);
    const words = keys instanceof DeviceArray ? undefined : hostKeyWords(keys, where);
    this.tail = undefined;
    return this.gpu.run(where, async () => {
      this.assertLive(where);
      if (n === 0) return 0;
      const gpu = this.gpu;
      const q = words ? scratchBuffer(gpu, words.byteLength, 'hkv.erase.keys') : undefined;
      const out = scratchBuffer(gpu, OUT_HEAD * 4, 'hkv.out');
      try {
        if (q && words) gpu.write(q, words);
        const encoder = gpu.device.createCommandEncoder({ label: where });
        this.engine.encodeErase(encoder, this.storage, q ?? (keys as DeviceArray).buffer, n, out);
        gpu.submit([encoder.finish()]);
        const head = new Uint32Array(await gpu.readBytes(out, 0, OUT_HEAD * 4));
        this.liveCount = head[1] as number;
        return head[0] as number;
      } finally {
        if (q) gpu.pool.release(q);
        gpu.pool.release(out);
      }
    });
  }

  /** Erases every entry the predicate takes; returns how many. */
  eraseIf(predicate: EntryPredicate): Promise<number> {
    const where = 'HkvCache.eraseIf';
    this.assertLive(where);
    const p = predicateWords(predicate, where);
    this.tail = undefined;
    return this.gpu.run(where, async () => {
      this.assertLive(where);
      const out = scratchBuffer(this.gpu, OUT_HEAD * 4, 'hkv.out');
      try {
        const encoder = this.gpu.device.createCommandEncoder({ label: where });
        this.engine.encodeScan(encoder, this.storage, { offset: 0, count: this.capacity }, p, out, undefined);
        this.gpu.submit([encoder.finish()]);
        const head = new Uint32Array(await this.gpu.readBytes(out, 0, OUT_HEAD * 4));
        this.liveCount = head[1] as number;
        return head[0] as number;
      } finally {
        this.gpu.pool.release(out);
      }
    });
  }

  /** The entries of slots [offset, offset + n) (n defaults to the rest of the table). */
  exportBatch(offset = 0, n?: number): Promise<ExportResult> {
    return this.exportBatchIf({}, offset, n);
  }

  /** The entries of slots [offset, offset + n) that the predicate takes. */
  exportBatchIf(predicate: EntryPredicate, offset = 0, n?: number): Promise<ExportResult> {
    const where = 'HkvCache.exportBatchIf';
    this.assertLive(where);
    const p = predicateWords(predicate, where);
    this.tail = undefined;
    return this.gpu.run(where, async () => {
      this.assertLive(where);
      const capacity = this.capacity;
      integerIn(where, 'offset', offset, 0, capacity);
      const count = n ?? capacity - offset;
      integerIn(where, 'n', count, 0, capacity - offset);
      if (count === 0) return { keys: new BigUint64Array(0), values: new Float32Array(0), scores: new BigUint64Array(0) };
      const gpu = this.gpu;
      const out = scratchBuffer(gpu, (OUT_HEAD + EV_WORDS * count) * 4, 'hkv.out');
      const vals = scratchBuffer(gpu, count * this.dim * 4, 'hkv.export.values');
      try {
        const encoder = gpu.device.createCommandEncoder({ label: where });
        this.engine.encodeScan(encoder, this.storage, { offset, count }, p, out, vals);
        gpu.submit([encoder.finish()]);
        const head = new Uint32Array(await gpu.readBytes(out, 0, OUT_HEAD * 4));
        const e = head[0] as number;
        this.liveCount = head[1] as number;
        if (e === 0) return { keys: new BigUint64Array(0), values: new Float32Array(0), scores: new BigUint64Array(0) };
        const [meta, v] = await Promise.all([gpu.readBytes(out, OUT_HEAD * 4, EV_WORDS * 4 * e), gpu.readBytes(vals, 0, e * this.dim * 4)]);
        const words = new Uint32Array(meta);
        const exported = new Float32Array(v);
        const host = this.host;
        if (host) {
          const d0 = this.storage.deviceSlots;
          const dim = this.dim;
          for (let i = 0; i < e; i++) {
            const g = words[EV_WORDS * i + 4] as number;
            if (g >= d0) exported.set(host.subarray((g - d0) * dim, (g - d0 + 1) * dim), i * dim);
          }
        }
        return { keys: u64FromWords(words, e, EV_WORDS, 0), scores: u64FromWords(words, e, EV_WORDS, 2), values: exported };
      } finally {
        gpu.pool.release(out);
        gpu.pool.release(vals);
      }
    });
  }

  // ---- size, capacity ----

  /** Live entries (read from the GPU). */
  size(): Promise<number> {
    this.assertLive('HkvCache.size');
    this.tail = undefined;
    return this.gpu.run('HkvCache.size', async () => {
      const words = new Uint32Array(await this.gpu.readBytes(this.storage.meta, this.storage.counterWord * 4, 4));
      this.liveCount = words[0] as number;
      return this.liveCount;
    });
  }

  /** size / capacity (read from the GPU). */
  async loadFactor(): Promise<number> {
    return (await this.size()) / this.capacity;
  }

  /** Empties the cache (capacity is kept). */
  clear(): Promise<void> {
    this.assertLive('HkvCache.clear');
    this.tail = undefined;
    return this.gpu.run('HkvCache.clear', async () => {
      const encoder = this.gpu.device.createCommandEncoder({ label: 'HkvCache.clear' });
      this.storage.encodeClear(encoder);
      this.gpu.submit([encoder.finish()]);
      this.liveCount = 0;
    });
  }

  /** Grows to at least `capacity` slots (doubling, keeping every entry), up to maxCapacity. */
  reserve(capacity: number): Promise<void> {
    const where = 'HkvCache.reserve';
    this.assertLive(where);
    positiveInteger(where, 'capacity', capacity);
    const target = roundCapacity(capacity);
    if (target > this.maxCapacity) {
      throw new InvalidArgumentError(
        `${where}: ${capacity} slots is past maxCapacity (${this.maxCapacity}); create the cache with a larger maxCapacity`,
      );
    }
    this.tail = undefined;
    return this.gpu.run(where, async () => {
      while (this.capacity < target) await this.grow();
    });
  }

  /** Before an insert of n keys: grow while the load would pass maxLoadFactor and maxCapacity allows. */
  private async makeRoom(n: number): Promise<void> {
    while (this.capacity < this.maxCapacity && this.liveCount + n > this.maxLoadFactor * this.capacity) await this.grow();
  }

  private async grow(): Promise<void> {
    const from = this.storage;
    const to = new HkvStorage(this.gpu, from.capacity * 2, this.dim, this.valueBufferBytes);
    const encoder = this.gpu.device.createCommandEncoder({ label: 'HkvCache.grow' });
    to.encodeClear(encoder);
    this.engine.encodeRehash(encoder, from, to);
    // The moved keys are in it now.
    to.knownEmpty = from.knownEmpty;
    this.gpu.submit([encoder.finish()]);
    this.storage = to;
    await this.gpu.finish();
    from.destroy();
  }

  /** Capacity, size, load factor and layout (one readback). */
  async stats(): Promise<HkvStats> {
    const size = await this.size();
    return {
      capacity: this.capacity,
      size,
      loadFactor: size / this.capacity,
      buckets: this.buckets,
      dim: this.dim,
      policy: this.policy,
      valueBuffers: this.storage.split.slices,
      slotsPerValueBuffer: this.storage.split.sliceSlots,
    };
  }

  // ---- device-side API ----

  /**
   * Encodes a find of device keys ((lo, hi) words) into `out.found` (one word per key) and
   * `out.values` (`n * dim` floats; leave it out for contains). As NVIDIA's find, the row of an
   * absent key is left as it was (the host `find` answers zeros). Nothing is read back; the cache's
   * capacity must not change until the encoder is submitted (await pending operations first).
   * `time` gives the timestamp writes of each compute pass (for benchmarks).
   */
  encodeFind(
    encoder: GPUCommandEncoder,
    keys: DeviceArray<'u32'>,
    out: { found: DeviceArray<'u32'>; values?: DeviceArray<'f32'> },
    time?: PassTimer,
  ): void {
    this.encodeFindBatches(encoder, [{ keys, ...out }], time);
  }

  /**
   * Encodes the finds of several batches of device keys, each as encodeFind, for a load larger
   * than one binding of values holds. Their results are those of encodeFind called per batch; with
   * values in several windows (valueWindowBytes), each window's copies then run once for all the
   * batches, which is faster than batch by batch.
   */
  encodeFindBatches(
    encoder: GPUCommandEncoder,
    batches: readonly { keys: DeviceArray<'u32'>; found: DeviceArray<'u32'>; values?: DeviceArray<'f32'> }[],
    time?: PassTimer,
  ): void {
    const where = 'HkvCache.encodeFind';
    this.assertLive(where);
    this.assertNoHostTier(where);
    const work = batches
      .map((b) => ({ keys: b.keys.buffer, n: keyCount(b.keys, where), out: { found: b.found.buffer, values: b.values?.buffer } }))
      .filter((b) => b.n > 0);
    for (const b of work) this.assertBatchFits(where, b.n, this.findKeyWords(b.out.values !== undefined));
    this.engine.encodeFinds(encoder, this.storage, work, time);
  }

  /** Encodes emptying the cache (as clear, without waiting). */
  encodeClear(encoder: GPUCommandEncoder): void {
    this.assertLive('HkvCache.encodeClear');
    this.storage.encodeClear(encoder);
    this.liveCount = 0;
  }

  /**
   * Encodes an insertOrAssign of device keys and values (no growth, no readback: the statuses and
   * slots are left in `out`, `4 + 2n` words, when given; give it when encoding many batches into one command
   * buffer, or each borrows a scratch buffer until the submit). A key's slot word is written when its
   * status is updated, inserted or evicted; the others are left as they were. Advances the LRU clock by n.
   */
  encodeInsertOrAssign(encoder: GPUCommandEncoder, batch: DeviceUpsertBatch, time?: PassTimer): void {
    this.encodeUpsertBatches('HkvCache.encodeInsertOrAssign', encoder, [batch], time);
  }

  /**
   * Encodes the insertOrAssigns of several batches, in order, each as encodeInsertOrAssign, for a
   * load larger than one binding of values holds. With values in several windows
   * (valueWindowBytes), each window's copies then run once for a group of batches (up to 2 GiB of
   * window lists, 24 bytes a key), which is faster than batch by batch. Batches may share one
   * `out` buffer.
   */
  encodeInsertOrAssignBatches(encoder: GPUCommandEncoder, batches: readonly DeviceUpsertBatch[], time?: PassTimer): void {
    this.encodeUpsertBatches('HkvCache.encodeInsertOrAssignBatches', encoder, batches, time);
  }

  private encodeUpsertBatches(where: string, encoder: GPUCommandEncoder, batches: readonly DeviceUpsertBatch[], time?: PassTimer): void {
    this.assertLive(where);
    this.assertNoHostTier(where);
    const counts = batches.map((batch) => {
      const n = keyCount(batch.keys, where);
      // Keys (with scores: staged as 4 words a key), statuses and slots 2 words a key, values dim.
      this.assertBatchFits(where, n, Math.max(batch.scores ? 4 : 2, this.dim));
      checkValues(batch.values, n, this.dim, where);
      if (this.policy === 'custom' && !batch.scores) throw new InvalidArgumentError(`${where}: the 'custom' policy needs scores`);
      return n;
    });
    const gpu = this.gpu;
    const borrowed: GPUBuffer[] = [];
    const work: UpsertBatch[] = [];
    batches.forEach((batch, k) => {
      const n = counts[k] as number;
      if (n === 0) return;
      // Without scores the kernels read only the keys: the caller's buffer serves as the batch.
      const staging = batch.scores ? scratchBuffer(gpu, 4 * n * 4, 'hkv.batch') : batch.keys.buffer;
      const out = batch.out?.buffer ?? scratchBuffer(gpu, outWords(n, false) * 4, 'hkv.out');
      if (batch.scores) {
        encoder.copyBufferToBuffer(batch.keys.buffer, 0, staging, 0, 8 * n);
        encoder.copyBufferToBuffer(batch.scores.buffer, 0, staging, 8 * n, 8 * n);
        borrowed.push(staging);
      }
      if (!batch.out) borrowed.push(out);
      work.push({
        staged: { n, batch: staging, values: batch.values.buffer, hasScores: batch.scores !== undefined },
        out,
        plan: {
          mode: UpdateMode.upsert,
          evict: false,
          dedupe: !this.assumeUniqueKeys,
          clock: this.clock,
          epoch: this.epochValue,
          insertPasses: INSERT_PASSES,
        },
      });
      this.clock += n;
    });
    this.engine.encodeUpserts(encoder, this.storage, work, time);
    for (const b of borrowed) gpu.pool.release(b);
  }

  /** Waits for every operation called so far. */
  sync(): Promise<void> {
    this.tail = undefined;
    return this.gpu.run('HkvCache.sync', () => this.gpu.finish());
  }

  get isDestroyed(): boolean {
    return this.destroyed;
  }

  /** Frees the cache's buffers (pending operations fail with DestroyedError). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.storage.destroy();
    this.engine.destroy();
  }

  private assertNoHostTier(where: string): void {
    if (this.host) {
      throw new InvalidArgumentError(
        `${where}: this cache keeps values in host memory (maxDeviceBytesForValues); use the host API, which stages them`,
      );
    }
  }

  /** Slots whose values live in host memory (the host tier; 0 without one). */
  get hostSlots(): number {
    return this.capacity - this.storage.deviceSlots;
  }

  /**
   * Throws LimitExceededError when one array of a batch of n keys, `wordsPerKey` words a key at
   * most, would pass one storage binding (before anything is allocated or runs).
   */
  private assertBatchFits(where: string, n: number, wordsPerKey: number): void {
    const limit = this.gpu.limits.maxStorageBufferBindingSize;
    const bytes = n * wordsPerKey * 4;
    if (bytes <= limit) return;
    throw new LimitExceededError(
      `${where}: a batch of ${n} keys (${wordsPerKey} words a key in one array)`,
      'maxStorageBufferBindingSize',
      bytes,
      limit,
      `Split it into batches of at most ${Math.floor(limit / (wordsPerKey * 4))} keys (device finds of a larger load: encodeFindBatches).`,
    );
  }

  private assertLive(where: string): void {
    if (this.destroyed) throw new DestroyedError(`${where}: this HkvCache`);
    this.gpu.assertUsable();
  }
}

function emptyResult(evict: boolean, _dim: number): UpsertResult | EvictResult {
  const base: UpsertResult = { inserted: 0, updated: 0, evicted: 0, refused: new Uint32Array(0), status: new Uint8Array(0) };
  if (!evict) return base;
  return { ...base, evictedKeys: new BigUint64Array(0), evictedValues: new Float32Array(0), evictedScores: new BigUint64Array(0) };
}

function decodeStatus(words: Uint32Array): UpsertResult {
  const status = new Uint8Array(words.length);
  let inserted = 0;
  let updated = 0;
  let evicted = 0;
  const refused: number[] = [];
  for (let i = 0; i < words.length; i++) {
    const s = words[i] as number;
    status[i] = s;
    if (s === HkvStatus.inserted) inserted++;
    else if (s === HkvStatus.updated) updated++;
    else if (s === HkvStatus.evicted) evicted++;
    else if (s === HkvStatus.refused) refused.push(i);
  }
  return { inserted, updated, evicted, refused: Uint32Array.from(refused), status };
}

function concatWords(parts: Uint32Array[]): Uint32Array {
  if (parts.length === 1) return parts[0] as Uint32Array;
  const out = new Uint32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function concatFloats(parts: Float32Array[], length: number): Float32Array {
  if (parts.length === 1) return parts[0] as Float32Array;
  const out = new Float32Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Item [at, at + n)'s part of a merged find: views, not copies (a copy of a large answer costs as much as its readback). */
function sliceFind(r: FindResult, at: number, n: number, dim: number): FindResult {
  return {
    values: r.values.length > 0 ? r.values.subarray(at * dim, (at + n) * dim) : new Float32Array(0),
    found: r.found.subarray(at, at + n),
    ...(r.scores ? { scores: r.scores.subarray(at, at + n) } : {}),
  };
}

function predicateWords(p: EntryPredicate, where: string) {
  if (p === null || typeof p !== 'object')
    throw new InvalidArgumentError(`${where}: the predicate must be an object, got ${describeValue(p)}`);
  for (const [k, v] of Object.entries(p)) {
    if (!['keyMask', 'keyValue', 'scoreMin', 'scoreMax'].includes(k)) {
      throw new InvalidArgumentError(`${where}: unknown predicate field '${k}' (keyMask, keyValue, scoreMin, scoreMax)`);
    }
    if (v !== undefined && typeof v !== 'bigint')
      throw new InvalidArgumentError(`${where}: predicate field ${k} must be a bigint, got ${describeValue(v)}`);
  }
  return {
    kmask: bigWords(p.keyMask ?? 0n),
    kval: bigWords((p.keyValue ?? 0n) & (p.keyMask ?? 0n)),
    smin: bigWords(p.scoreMin ?? 0n),
    smax: bigWords(p.scoreMax ?? MAX_U64),
  };
}

/** Slots per bucket, exported for users sizing caches. */
export const SLOTS_PER_BUCKET = BUCKET_SLOTS;
