import { BufferUsage, DestroyedError, DeviceArray, encodeExclusiveScan, type Gpu, InvalidArgumentError, type Kernel } from '@gpuhash/core';
import { assertNoReservedKeys, RESERVED_FLAG } from './sentinels';
import type {
  ApplyBatch,
  ApplyResult,
  DeviceFindResult,
  FindResult,
  HostKeys,
  InsertResult,
  KeysInput,
  KeyType,
  LinearProbeOptions,
  TableStats,
  U32Input,
} from './types';
import { bulkBuildKernel, bulkCountKernel, bulkScatterKernel, REGION_SLOTS } from './wgsl/bulk';
import {
  applyKernel,
  eraseKernel,
  findKernel,
  insertKernel,
  rehashKernel,
  retrieveKernel,
  spillInsertKernel,
  statsKernel,
} from './wgsl/kernels';
import type { KeyLayout } from './wgsl/layout';
import { u32Layout } from './wgsl/layout-u32';
import { u64Layout } from './wgsl/layout-u64';

const MIN_CAPACITY = 64;
/**
 * Kernels that tally (insert, erase, apply, rehash) flush one global atomic per workgroup; capping
 * the grid (the kernels grid-stride) keeps that to a few thousand atomics however large the batch.
 */
const TALLY_WORKGROUPS = 16_384;

function nextPow2(n: number): number {
  let c = MIN_CAPACITY;
  while (c < n) c *= 2;
  return c;
}

interface Batch {
  n: number;
  keys: GPUBuffer;
  values?: GPUBuffer;
  /** Buffers this call uploaded and must destroy. */
  temporary: GPUBuffer[];
}

/**
 * Open addressing with linear probing (seed 001, "A simple GPU hash table"): u32 or u64 keys,
 * u32 values, power-of-two capacity, murmur3's finaliser as hash, a CAS to claim a slot.
 * Operations on one table run in call order on the device queue; each resolves when its results
 * (or the table's new size) are back on the host.
 */
export class LinearProbeTable<K extends KeyType = 'u32'> {
  private slots: GPUBuffer;
  private readonly counters: GPUBuffer;
  private failedList: GPUBuffer;
  private failedCapacity = 0;
  /** Scratch of the partitioned bulk insert, grown on demand. */
  private bulk: { pairs: GPUBuffer; spill: GPUBuffer; counts: GPUBuffer; cursors: GPUBuffer; n: number; regions: number } | undefined;
  /**
   * Buffers replaced by larger ones while passes already encoded may still use them; destroyed at
   * the start of the next host operation (callers submit their encoders before that).
   */
  private retired: GPUBuffer[] = [];
  private readonly bulkInsert: 'auto' | 'always' | 'never';
  private capacityValue: number;
  private sizeValue = 0;
  private tombstoneCount = 0;
  private rehashCount = 0;
  private destroyed = false;
  readonly maxLoadFactor: number;
  readonly growth: boolean;
  readonly keyType: K;
  private readonly layout: KeyLayout;
  private readonly maxProbesOption: number;

  private constructor(
    readonly gpu: Gpu,
    capacity: number,
    options: LinearProbeOptions<K>,
  ) {
    this.keyType = (options.keyType ?? 'u32') as K;
    this.layout = this.keyType === 'u64' ? u64Layout : u32Layout;
    this.maxLoadFactor = options.maxLoadFactor ?? 0.8;
    this.growth = options.growth ?? true;
    this.maxProbesOption = options.maxProbes ?? 4096;
    this.bulkInsert = options.bulkInsert ?? 'auto';
    this.capacityValue = capacity;
    this.slots = this.allocateSlots(capacity);
    this.counters = gpu.createBuffer(16, 'linear-probe.counters');
    this.failedList = this.ensureFailedList(1024);
  }

  /** Creates an empty table of at least `options.capacity` slots. */
  static async create<K extends KeyType = 'u32'>(gpu: Gpu, options: LinearProbeOptions<K>): Promise<LinearProbeTable<K>> {
    const { capacity } = options;
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`LinearProbeTable.create: capacity must be a positive integer, got ${capacity}`);
    const load = options.maxLoadFactor ?? 0.8;
    if (!(load > 0 && load <= 1)) throw new RangeError(`LinearProbeTable.create: maxLoadFactor must be in (0, 1], got ${load}`);
    const probes = options.maxProbes ?? 4096;
    if (!Number.isInteger(probes) || probes < 1)
      throw new RangeError(`LinearProbeTable.create: maxProbes must be a positive integer, got ${probes}`);
    if (options.keyType !== undefined && options.keyType !== 'u32' && options.keyType !== 'u64') {
      throw new RangeError(`LinearProbeTable.create: keyType must be 'u32' or 'u64', got ${String(options.keyType)}`);
    }
    return gpu.run('LinearProbeTable.create', async () => {
      const table = new LinearProbeTable<K>(gpu, nextPow2(capacity), options);
      const encoder = gpu.device.createCommandEncoder();
      table.encodeClear(encoder);
      gpu.submit([encoder.finish()]);
      return table;
    });
  }

  get capacity(): number {
    return this.capacityValue;
  }

  /** Live keys, as of the last completed operation (see `sync()` after device-side encodes). */
  get size(): number {
    return this.sizeValue;
  }

  get loadFactor(): number {
    return this.sizeValue / this.capacityValue;
  }

  get tombstones(): number {
    return this.tombstoneCount;
  }

  /** The probe bound in force (the option, capped at the capacity). */
  get maxProbes(): number {
    return Math.min(this.maxProbesOption, this.capacityValue);
  }

  /** The slots buffer (u32 keys: key, value; u64 keys: tag, lo, hi, value), for device-side code. */
  get slotsBuffer(): GPUBuffer {
    this.assertAlive();
    return this.slots;
  }

  // ---- host API ------------------------------------------------------------------------------

  /** Inserts pairs; a key already present keeps its value. Duplicates in a batch: one of their values is stored. */
  insert(keys: KeysInput<K>, values: U32Input): Promise<InsertResult> {
    return this.runInsert('insert', keys, values, false);
  }

  /** Inserts pairs, overwriting the value of keys already present. Duplicates in a batch: one of their values is stored. */
  insertOrAssign(keys: KeysInput<K>, values: U32Input): Promise<InsertResult> {
    return this.runInsert('insertOrAssign', keys, values, true);
  }

  /** Looks keys up. Host keys give host results; device keys give device-resident results. */
  find(keys: HostKeys<K>): Promise<FindResult>;
  find(keys: DeviceArray<'u32'>): Promise<DeviceFindResult>;
  find(keys: KeysInput<K>): Promise<FindResult | DeviceFindResult> {
    return this.gpu.run('LinearProbeTable.find', async () => {
      this.beginHostOperation();
      const batch = this.prepare('find', keys);
      const values = this.gpu.createArray('u32', batch.n, 'linear-probe.find.values');
      const found = this.gpu.createArray('u32', batch.n, 'linear-probe.find.found');
      const encoder = this.gpu.device.createCommandEncoder();
      this.encodeFind(encoder, batch.keys, batch.n, values.buffer, found.buffer);
      this.gpu.submit([encoder.finish()]);
      this.release(batch);
      if (keys instanceof DeviceArray) return { values, found };
      const hostValues = await this.gpu.download(values);
      const hostFound = await this.gpu.download(found);
      values.destroy();
      found.destroy();
      return { values: hostValues, found: Uint8Array.from(hostFound) };
    });
  }

  /** 1 for each key present, else 0. */
  async contains(keys: HostKeys<K>): Promise<Uint8Array> {
    return (await this.find(keys)).found;
  }

  /** Erases keys (their slots become tombstones, reused by later inserts). Returns how many were present. */
  erase(keys: KeysInput<K>): Promise<number> {
    return this.gpu.run('LinearProbeTable.erase', async () => {
      this.beginHostOperation();
      const batch = this.prepare('erase', keys);
      const before = this.sizeValue;
      const encoder = this.gpu.device.createCommandEncoder();
      this.resetFailedList(encoder, batch.n);
      this.dispatch(
        encoder,
        eraseKernel(this.layout),
        batch.n,
        [this.slots, batch.keys, this.counters, this.failedList],
        0,
        TALLY_WORKGROUPS,
      );
      this.gpu.submit([encoder.finish()]);
      this.release(batch);
      const failed = await this.refresh();
      this.throwOnReserved('erase', failed);
      return before - this.sizeValue;
    });
  }

  /**
   * Runs a mixed batch: every op runs concurrently with the others in one dispatch. A find of a
   * key that an insert in the same batch adds may or may not see it (and sees its value if it
   * does); a find never sees a value that was not stored under its key.
   */
  apply(batch: ApplyBatch<K>): Promise<ApplyResult> {
    return this.gpu.run('LinearProbeTable.apply', async () => {
      this.beginHostOperation();
      const keyWords = this.hostKeyWords(batch.keys, 'apply');
      const n = keyWords.length / this.layout.wordsPerKey;
      if (batch.ops.length !== n) throw new InvalidArgumentError(`apply: ops has ${batch.ops.length} entries but keys has ${n}`);
      if (batch.values && batch.values.length !== n)
        throw new InvalidArgumentError(`apply: values has ${batch.values.length} entries but keys has ${n}`);
      let inserts = 0;
      for (let i = 0; i < n; i++) {
        const op = batch.ops[i] as number;
        if (op > 3) throw new RangeError(`apply: op ${op} at index ${i} is not an Op code (0 insert, 1 insertOrAssign, 2 find, 3 erase)`);
        if (op <= 1) inserts++;
      }
      await this.growFor(inserts);
      const ops = this.gpu.upload(Uint32Array.from(batch.ops));
      const keys = this.gpu.upload(keyWords);
      const values = this.gpu.upload(batch.values ?? new Uint32Array(n));
      const out = this.gpu.createArray('u32', 2 * n, 'linear-probe.apply.out');
      const encoder = this.gpu.device.createCommandEncoder();
      this.encodeApply(encoder, ops.buffer, keys.buffer, values.buffer, n, out.buffer);
      this.gpu.submit([encoder.finish()]);
      const failed = await this.refresh();
      const both = await this.gpu.download(out);
      for (const a of [ops, keys, values, out]) a.destroy();
      const resultValues = new Uint32Array(n);
      const status = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        resultValues[i] = both[2 * i] as number;
        status[i] = both[2 * i + 1] as number;
      }
      return { values: resultValues, status, failed };
    });
  }

  /** Removes every key (keeps the capacity). */
  clear(): Promise<void> {
    return this.gpu.run('LinearProbeTable.clear', async () => {
      this.beginHostOperation();
      const encoder = this.gpu.device.createCommandEncoder();
      this.encodeClear(encoder);
      this.gpu.submit([encoder.finish()]);
      this.sizeValue = 0;
      this.tombstoneCount = 0;
    });
  }

  /** Every live pair, in no particular order. */
  retrieveAll(): Promise<{ keys: K extends 'u64' ? BigUint64Array : Uint32Array; values: Uint32Array }> {
    return this.gpu.run('LinearProbeTable.retrieveAll', async () => {
      this.beginHostOperation();
      const count = this.sizeValue;
      const keys = this.gpu.createArray('u32', count * this.layout.wordsPerKey, 'linear-probe.retrieve.keys');
      const values = this.gpu.createArray('u32', count, 'linear-probe.retrieve.values');
      const cursor = this.gpu.createArray('u32', 1, 'linear-probe.retrieve.cursor');
      const encoder = this.gpu.device.createCommandEncoder();
      this.dispatch(
        encoder,
        retrieveKernel(this.layout),
        this.capacityValue,
        [this.slots, keys.buffer, values.buffer, cursor.buffer],
        0,
        4096,
      );
      this.gpu.submit([encoder.finish()]);
      const written = (await this.gpu.download(cursor))[0] as number;
      if (written !== count)
        throw new Error(`retrieveAll: the table holds ${written} keys but its size says ${count}; this is a gpuhash bug`);
      const keyWords = await this.gpu.download(keys);
      const hostKeys = this.keyType === 'u64' ? new BigUint64Array(keyWords.buffer, keyWords.byteOffset, count) : keyWords;
      const result = { keys: hostKeys as K extends 'u64' ? BigUint64Array : Uint32Array, values: await this.gpu.download(values) };
      for (const a of [keys, values, cursor]) a.destroy();
      return result;
    });
  }

  /**
   * Rebuilds the table into `capacity` slots (rounded up to a power of two; default: the current
   * capacity), dropping tombstones. Shrinks too, down to what the live keys need.
   */
  rehash(capacity: number = this.capacityValue): Promise<void> {
    return this.gpu.run('LinearProbeTable.rehash', async () => {
      this.beginHostOperation();
      if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`rehash: capacity must be a positive integer, got ${capacity}`);
      if (capacity < this.sizeValue) throw new RangeError(`rehash: ${capacity} slots cannot hold the table's ${this.sizeValue} keys`);
      await this.rehashInto(nextPow2(capacity));
    });
  }

  /** Occupancy and probe lengths, computed on the GPU. */
  stats(): Promise<TableStats> {
    return this.gpu.run('LinearProbeTable.stats', async () => {
      this.beginHostOperation();
      const out = this.gpu.createArray('u32', 5, 'linear-probe.stats');
      const encoder = this.gpu.device.createCommandEncoder();
      this.dispatch(encoder, statsKernel(this.layout), this.capacityValue, [this.slots, out.buffer], 0, 4096);
      this.gpu.submit([encoder.finish()]);
      const [live = 0, tombs = 0, lo = 0, hi = 0, longest = 0] = await this.gpu.download(out);
      out.destroy();
      const sum = hi * 2 ** 32 + lo;
      return {
        capacity: this.capacityValue,
        size: live,
        tombstones: tombs,
        loadFactor: live / this.capacityValue,
        averageProbeLength: live === 0 ? 0 : 1 + sum / live,
        maxProbeLength: live === 0 ? 0 : 1 + longest,
        maxProbes: this.maxProbes,
        rehashes: this.rehashCount,
      };
    });
  }

  /** Reads the table's size and tombstone count back after device-side encodes. */
  sync(): Promise<void> {
    return this.gpu.run('LinearProbeTable.sync', async () => {
      this.beginHostOperation();
      await this.refresh();
    });
  }

  /** Frees the table's GPU memory. Later calls throw DestroyedError. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.slots.destroy();
    this.counters.destroy();
    this.failedList.destroy();
    for (const b of [...this.retired, ...Object.values(this.bulk ?? {})]) if (typeof b === 'object') b.destroy();
    this.retired = [];
  }

  // ---- device-side API: encode into the caller's command encoder, no host round trip ---------

  /** Resets every slot to empty and the counters to zero. */
  encodeClear(encoder: GPUCommandEncoder): void {
    this.assertAlive();
    this.gpu.encodeFill(encoder, this.slots, this.layout.emptyWord, this.layout.wordsPerSlot * this.capacityValue);
    encoder.clearBuffer(this.counters);
    // Commands run in order, so every later encode sees an empty table.
    this.sizeValue = 0;
    this.tombstoneCount = 0;
  }

  /**
   * Inserts n pairs from device buffers; no growth, failures land in the failed list (see `sync`).
   * Large batches into u32 tables without tombstones take the partitioned bulk path (see
   * wgsl/bulk.ts); `timestampWrites` then spans all of its passes. Returns the path taken.
   */
  encodeInsert(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    options: {
      assign?: boolean;
      timestampWrites?: GPUComputePassTimestampWrites;
      /** @internal benchmark switch: the paper's blind CAS (default) or load-then-CAS. */
      blindCas?: boolean;
      /** Overrides the table's `bulkInsert` option for this batch. */
      bulk?: 'auto' | 'always' | 'never';
    } = {},
  ): 'bulk' | 'atomic' {
    this.assertAlive();
    this.resetFailedList(encoder, n);
    const assign = options.assign ?? false;
    if (this.useBulk(n, options.bulk ?? this.bulkInsert)) {
      this.encodeBulkInsert(encoder, keys, values, n, assign, options.timestampWrites);
      return 'bulk';
    }
    const kernel = insertKernel(this.layout, { assign, reuseTombs: this.tombstoneCount > 0, blindCas: options.blindCas });
    this.dispatch(
      encoder,
      kernel,
      n,
      [this.slots, keys, values, this.counters, this.failedList],
      0,
      TALLY_WORKGROUPS,
      options.timestampWrites,
    );
    return 'atomic';
  }

  private useBulk(n: number, mode: 'auto' | 'always' | 'never'): boolean {
    if (mode === 'never' || this.layout.name !== 'u32' || this.tombstoneCount > 0) return false;
    if (this.capacityValue < 4 * REGION_SLOTS || n === 0) return false;
    // Two u32 arrays of REGION_SLOTS words in workgroup memory.
    if (this.gpu.limits.maxComputeWorkgroupStorageSize < 8 * REGION_SLOTS + 64) return false;
    if (mode === 'always') return true;
    // On a software adapter workgroup memory is no faster than the rest: the atomic path wins.
    if (this.gpu.isSoftware) return false;
    // Each touched region costs a load and a store of its slots: worth it from about 256 keys per
    // region. Above load 0.8 the spilled keys, placed last, end up with the longest displacements,
    // which slows lookups (measured on an H200: find-hit -16% at load 0.9), so 'auto' stops there.
    return n >= 1 << 15 && n * 8 >= this.capacityValue && this.sizeValue + n <= 0.8 * this.capacityValue;
  }

  private bulkScratch(n: number): NonNullable<LinearProbeTable<K>['bulk']> {
    const regions = this.capacityValue / REGION_SLOTS;
    const b = this.bulk;
    if (b && b.n >= n && b.regions === regions) return b;
    if (b) this.retired.push(b.pairs, b.spill, b.counts, b.cursors);
    const size = Math.max(n, b?.n ?? 0);
    this.bulk = {
      pairs: this.gpu.createBuffer(size * 8, 'linear-probe.bulk.pairs'),
      spill: this.gpu.createBuffer((size + 1) * 4, 'linear-probe.bulk.spill'),
      counts: this.gpu.createBuffer(regions * 4, 'linear-probe.bulk.counts'),
      cursors: this.gpu.createBuffer(regions * 4, 'linear-probe.bulk.cursors'),
      n: size,
      regions,
    };
    return this.bulk;
  }

  private encodeBulkInsert(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    assign: boolean,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const b = this.bulkScratch(n);
    // The timing spans the first pass's start to the last pass's end.
    const first = timestampWrites && {
      querySet: timestampWrites.querySet,
      beginningOfPassWriteIndex: timestampWrites.beginningOfPassWriteIndex,
    };
    const last = timestampWrites && { querySet: timestampWrites.querySet, endOfPassWriteIndex: timestampWrites.endOfPassWriteIndex };
    encoder.clearBuffer(b.counts, 0, b.regions * 4);
    encoder.clearBuffer(b.spill, 0, 4);
    this.dispatch(encoder, bulkCountKernel(), n, [keys, b.counts], 0, undefined, first);
    encodeExclusiveScan(this.gpu, encoder, b.counts, b.cursors, b.regions);
    this.dispatch(encoder, bulkScatterKernel(), n, [keys, values, b.cursors, b.pairs, this.failedList]);
    this.dispatchWith(encoder, bulkBuildKernel(assign), b.regions, b.regions * 256, [
      this.slots,
      b.pairs,
      b.cursors,
      this.counters,
      b.spill,
    ]);
    this.dispatchWith(
      encoder,
      spillInsertKernel(this.layout, assign),
      0,
      1024 * 256,
      [this.slots, b.pairs, b.spill, this.counters, this.failedList],
      last,
    );
  }

  /** Looks up n keys; writes values and found flags (u32 each). */
  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    this.assertAlive();
    this.dispatch(encoder, findKernel(this.layout), n, [this.slots, keys, outValues, outFound], 0, undefined, timestampWrites);
  }

  /** Erases n keys. */
  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.assertAlive();
    this.resetFailedList(encoder, n);
    this.dispatch(
      encoder,
      eraseKernel(this.layout),
      n,
      [this.slots, keys, this.counters, this.failedList],
      0,
      TALLY_WORKGROUPS,
      timestampWrites,
    );
  }

  /** A mixed batch; `out` receives (value, status) per op. */
  encodeApply(
    encoder: GPUCommandEncoder,
    ops: GPUBuffer,
    keys: GPUBuffer,
    values: GPUBuffer,
    n: number,
    out: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    this.assertAlive();
    this.resetFailedList(encoder, n);
    this.dispatch(
      encoder,
      applyKernel(this.layout),
      n,
      [this.slots, ops, keys, values, out, this.counters, this.failedList],
      0,
      TALLY_WORKGROUPS,
      timestampWrites,
    );
  }

  // ---- internals -----------------------------------------------------------------------------

  private assertAlive(): void {
    if (this.destroyed) throw new DestroyedError('this LinearProbeTable');
    this.gpu.assertUsable();
  }

  /** Start of every host operation: frees buffers retired by earlier (submitted) encodes. */
  private beginHostOperation(): void {
    this.assertAlive();
    for (const b of this.retired) b.destroy();
    this.retired = [];
  }

  private allocateSlots(capacity: number): GPUBuffer {
    return this.gpu.createBuffer(capacity * this.layout.wordsPerSlot * 4, `linear-probe.slots (${capacity} ${this.layout.name} slots)`);
  }

  private ensureFailedList(n: number): GPUBuffer {
    if (n <= this.failedCapacity) return this.failedList;
    if (this.failedList) this.retired.push(this.failedList);
    this.failedCapacity = Math.max(n, 2 * this.failedCapacity);
    this.failedList = this.gpu.createBuffer(4 * (this.failedCapacity + 1), 'linear-probe.failed');
    return this.failedList;
  }

  private resetFailedList(encoder: GPUCommandEncoder, n: number): void {
    this.ensureFailedList(n);
    encoder.clearBuffer(this.failedList, 0, 4);
  }

  private dispatch(
    encoder: GPUCommandEncoder,
    kernel: Kernel,
    n: number,
    buffers: GPUBuffer[],
    aux = 0,
    maxWorkgroups?: number,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const params = this.gpu.uniforms(new Uint32Array([n, this.capacityValue - 1, this.maxProbes, aux]));
    this.gpu.encodeDispatch(encoder, kernel, { bindings: [params, ...buffers], invocations: n, maxWorkgroups }, timestampWrites);
    this.gpu.pool.release(params);
  }

  /** Host keys as the u32 words the kernels read (u64: low, high pairs); u32 keys are checked for sentinels. */
  private hostKeyWords(keys: HostKeys<K>, what: string): Uint32Array {
    if (keys instanceof BigUint64Array) {
      if (this.keyType !== 'u64') throw new InvalidArgumentError(`${what}: this table has u32 keys; a BigUint64Array needs keyType 'u64'`);
      // Little-endian words of each u64: low, then high.
      const words = new Uint32Array(keys.length * 2);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as bigint;
        words[2 * i] = Number(k & 0xffffffffn);
        words[2 * i + 1] = Number(k >> 32n);
      }
      return words;
    }
    if (!(keys instanceof Uint32Array))
      throw new InvalidArgumentError(
        `${what}: keys must be a Uint32Array${this.keyType === 'u64' ? ', a BigUint64Array' : ''} or a DeviceArray`,
      );
    if (this.keyType === 'u64' && keys.length % 2 !== 0) {
      throw new InvalidArgumentError(`${what}: u64 keys as a Uint32Array need (low, high) word pairs, but it has ${keys.length} words`);
    }
    if (this.keyType === 'u32') assertNoReservedKeys(keys, what);
    return keys;
  }

  /** Like dispatch, with params.n and the invocation count given separately. */
  private dispatchWith(
    encoder: GPUCommandEncoder,
    kernel: Kernel,
    paramsN: number,
    invocations: number,
    buffers: GPUBuffer[],
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const params = this.gpu.uniforms(new Uint32Array([paramsN, this.capacityValue - 1, this.maxProbes, 0]));
    this.gpu.encodeDispatch(encoder, kernel, { bindings: [params, ...buffers], invocations }, timestampWrites);
    this.gpu.pool.release(params);
  }

  private prepare(what: string, keys: KeysInput<K>, values?: U32Input): Batch {
    const perKey = this.layout.wordsPerKey;
    if (keys instanceof DeviceArray && keys.length % perKey !== 0) {
      throw new InvalidArgumentError(`${what}: u64 keys on the device need two words each, but the array has ${keys.length}`);
    }
    const keyWords = keys instanceof DeviceArray ? undefined : this.hostKeyWords(keys as HostKeys<K>, what);
    const n = (keyWords ?? (keys as DeviceArray<'u32'>)).length / perKey;
    if (values !== undefined && values.length !== n) {
      throw new InvalidArgumentError(`${what}: keys has ${n} entries but values has ${values.length}`);
    }
    if (keys instanceof DeviceArray || values instanceof DeviceArray) {
      for (const a of [keys, values]) {
        if (a instanceof DeviceArray && a.type !== 'u32')
          throw new InvalidArgumentError(`${what}: device arrays must hold u32, got ${a.type}`);
      }
    }
    const temporary: GPUBuffer[] = [];
    const toBuffer = (a: U32Input): GPUBuffer => {
      if (a instanceof DeviceArray) return a.buffer;
      const uploaded = this.gpu.upload(a, `linear-probe.${what}`);
      temporary.push(uploaded.buffer);
      return uploaded.buffer;
    };
    return {
      n,
      keys: toBuffer(keyWords ?? (keys as DeviceArray<'u32'>)),
      values: values === undefined ? undefined : toBuffer(values),
      temporary,
    };
  }

  private release(batch: Batch): void {
    for (const b of batch.temporary) b.destroy();
  }

  /** Reads a counters buffer and the failed list (size, tombstones, failed batch indices). */
  private async readReport(
    counters: GPUBuffer,
    withIndices = true,
  ): Promise<{ size: number; tombstones: number; failedCount: number; failed: Uint32Array }> {
    const report = this.gpu.pool.acquire(32, BufferUsage.COPY_SRC | BufferUsage.COPY_DST, 'linear-probe.report');
    const encoder = this.gpu.device.createCommandEncoder();
    encoder.copyBufferToBuffer(counters, 0, report, 0, 16);
    encoder.copyBufferToBuffer(this.failedList, 0, report, 16, 4);
    this.gpu.submit([encoder.finish()]);
    const words = new Uint32Array(await this.gpu.readBytes(report, 0, 20));
    this.gpu.pool.release(report);
    const failedCount = words[4] as number;
    const kept = withIndices ? Math.min(failedCount, this.failedCapacity) : 0;
    const failed = kept === 0 ? new Uint32Array(0) : new Uint32Array(await this.gpu.readBytes(this.failedList, 4, 4 * kept));
    return { size: words[0] as number, tombstones: words[1] as number, failedCount, failed };
  }

  /** Reads this table's counters into size and tombstones; returns the failed batch indices. */
  private async refresh(): Promise<Uint32Array> {
    const report = await this.readReport(this.counters);
    this.sizeValue = report.size;
    this.tombstoneCount = report.tombstones;
    return report.failed;
  }

  private throwOnReserved(what: string, failed: Uint32Array): void {
    const reserved = failed.filter((i) => (i & RESERVED_FLAG) !== 0).map((i) => i & ~RESERVED_FLAG);
    if (reserved.length > 0) {
      const first = Math.min(...reserved);
      throw new RangeError(
        `${what}: the key at index ${first}${reserved.length > 1 ? ` (and ${reserved.length - 1} more)` : ''} is reserved (the table's empty, tombstone and busy markers); it was skipped, the other keys were applied.`,
      );
    }
  }

  private runInsert(what: string, keys: KeysInput<K>, values: U32Input, assign: boolean): Promise<InsertResult> {
    return this.gpu.run(`LinearProbeTable.${what}`, async () => {
      this.beginHostOperation();
      const batch = this.prepare(what, keys, values);
      const before = this.sizeValue;
      await this.growFor(batch.n);
      let failed: Uint32Array = new Uint32Array(0);
      // An insert batch is idempotent (present keys stay, or get the same batch values again), so
      // after growing, the whole batch simply runs again: no key is ever dropped.
      for (let attempt = 0; ; attempt++) {
        const encoder = this.gpu.device.createCommandEncoder();
        const path = this.encodeInsert(encoder, batch.keys, batch.values as GPUBuffer, batch.n, { assign });
        this.gpu.submit([encoder.finish()]);
        failed = await this.refresh();
        this.throwOnReserved(what, failed);
        if (failed.length > 0 && path === 'bulk' && !this.growth) {
          // The bulk path reports pair positions, not batch indices: rerun the (idempotent) batch
          // on the atomic path, which names the batch indices of the keys that still do not fit.
          const again = this.gpu.device.createCommandEncoder();
          this.encodeInsert(again, batch.keys, batch.values as GPUBuffer, batch.n, { assign, bulk: 'never' });
          this.gpu.submit([again.finish()]);
          failed = await this.refresh();
        }
        if (failed.length === 0 || !this.growth || attempt >= 8) break;
        await this.rehashInto(this.capacityValue * 2);
      }
      this.release(batch);
      return { inserted: this.sizeValue - before, failed };
    });
  }

  /**
   * Before a batch of up to `incoming` new keys: when keys plus tombstones would pass the load
   * limit, rebuild, growing only if the live keys need it (a rebuild at the same size just drops
   * the tombstones that erases, and mixed batches, leave behind).
   */
  private async growFor(incoming: number): Promise<void> {
    if (!this.growth) return;
    const limit = this.maxLoadFactor * this.capacityValue;
    if (this.sizeValue + this.tombstoneCount + incoming <= limit) return;
    const needed = this.sizeValue + incoming;
    const target =
      needed <= limit ? this.capacityValue : Math.max(this.capacityValue * 2, nextPow2(Math.ceil(needed / this.maxLoadFactor)));
    await this.rehashInto(target);
  }

  private async rehashInto(capacity: number): Promise<void> {
    const oldSlots = this.slots;
    const oldCapacity = this.capacityValue;
    for (let target = capacity; target <= 2 ** 31; target *= 2) {
      // The new table counts into its own counters, so a failed attempt leaves this one intact.
      const slots = this.allocateSlots(target);
      const counters = this.gpu.pool.acquire(
        16,
        BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST,
        'linear-probe.rehash.counters',
      );
      const encoder = this.gpu.device.createCommandEncoder();
      this.gpu.encodeFill(encoder, slots, this.layout.emptyWord, this.layout.wordsPerSlot * target);
      encoder.clearBuffer(counters, 0, 16);
      // Only the count matters here: the list keeps what indices fit.
      this.resetFailedList(encoder, 0);
      const params = this.gpu.uniforms(new Uint32Array([oldCapacity, target - 1, Math.min(this.maxProbesOption, target), 0]));
      this.gpu.encodeDispatch(encoder, rehashKernel(this.layout), {
        bindings: [params, slots, oldSlots, counters, this.failedList],
        invocations: oldCapacity,
        maxWorkgroups: TALLY_WORKGROUPS,
      });
      this.gpu.pool.release(params);
      this.gpu.submit([encoder.finish()]);
      const report = await this.readReport(counters, false);
      if (report.failedCount === 0) {
        const commit = this.gpu.device.createCommandEncoder();
        commit.copyBufferToBuffer(counters, 0, this.counters, 0, 16);
        this.gpu.submit([commit.finish()]);
        this.gpu.pool.release(counters);
        oldSlots.destroy();
        this.slots = slots;
        this.capacityValue = target;
        this.sizeValue = report.size;
        this.tombstoneCount = 0;
        this.rehashCount++;
        return;
      }
      // Some key had no room within the probe bound: try a larger table.
      this.gpu.pool.release(counters);
      slots.destroy();
    }
    throw new Error('rehash: no capacity holds these keys within the probe bound; raise maxProbes');
  }
}
