import { countReservedKernel } from '../count-reserved-kernel';
import { DeviceArray } from '../device-array';
import { DestroyedError, InternalError, InvalidArgumentError, InvalidOpError, ReservedKeyError, TableBusyError } from '../errors';
import type { Gpu } from '../gpu';
import { STORAGE_USAGE } from '../usage';
import { findInChunks, HOST_FIND_CHUNK_KEYS } from './chunked-find';
import type { DictionaryEngine, StagedApply, StagedBatch } from './engine';
import type { FailureReport } from './failures';
import {
  checkFindOut,
  checkValues,
  deviceKeyCount,
  distinctUnflagged,
  hostKeyCount,
  hostKeyWords,
  type KeySpec,
  reservedIndices,
} from './keys';
import { describeValue, Op, validateOps } from './ops';
import type {
  ApplyBatch,
  ApplyResult,
  DeviceApplyBatch,
  DeviceApplyResult,
  DeviceFindResult,
  Dictionary,
  DictionaryCapability,
  DictionaryStats,
  EncodeInsertOptions,
  FindOptions,
  FindResult,
  HostKeys,
  InsertResult,
  KeysInput,
  KeyType,
  RetrieveResult,
  SyncResult,
  ValuesInput,
} from './types';

/** Host batches of at least this many u32 keys are checked for reserved keys on the GPU. */
const GPU_RESERVED_SCAN_MIN = 2 ** 18;

/**
 * The user's side of every dictionary table, written once (cuCollections' open_addressing_impl):
 * a table package subclasses it with its engine and adds its own options and operations.
 *
 * - Input: keys, values and op codes are checked before anything reaches the GPU; host batches
 *   with a reserved key are refused whole; device batches are checked on the GPU, which applies
 *   the other entries, and the error says so.
 * - Ordering: host operations run in call order (on the Gpu's queue); an `encode*` while one is
 *   pending throws TableBusyError; `destroy()` waits for pending operations, which then reject
 *   with DestroyedError.
 * - Stale state: after an `encode*` the next host operation reads the counters back first, so the
 *   counts it returns are right.
 */
export abstract class DictionaryTable<K extends KeyType, E extends DictionaryEngine<K>> implements Dictionary<K> {
  /**
   * Keys per chunk of a host find: a larger batch runs in chunks whose upload, lookup and readback
   * overlap (default 2^21). A tuning knob for every table of the process.
   */
  static findChunkKeys = HOST_FIND_CHUNK_KEYS;
  abstract readonly capabilities: ReadonlySet<DictionaryCapability>;
  readonly keyType: K;
  readonly #owner: string;
  #pending = 0;
  #stale = false;
  #destroyed = false;
  #engineDestroyed = false;
  /** The failed list of encoded batches, read back by the host operation that found the table stale. */
  #encodedReport: FailureReport | undefined;
  /** Buffers staged by the running host operation, destroyed when it ends. */
  #temporaries: Array<{ destroy(): void }> = [];

  protected constructor(
    readonly gpu: Gpu,
    protected readonly engine: E,
    owner: string,
  ) {
    this.keyType = engine.keySpec.type;
    this.#owner = owner;
  }

  get capacity(): number {
    return this.engine.capacity;
  }

  /** Live keys as of the last host operation (see `sync()` after device-side encodes). */
  get size(): number {
    return this.engine.size;
  }

  get loadFactor(): number {
    return this.engine.size / this.engine.capacity;
  }

  get isDestroyed(): boolean {
    return this.#destroyed;
  }

  // ---- host API ------------------------------------------------------------------------------

  insert(keys: KeysInput<K>, values: ValuesInput): Promise<InsertResult> {
    return this.runInsert('insert', keys, values, false);
  }

  insertOrAssign(keys: KeysInput<K>, values: ValuesInput): Promise<InsertResult> {
    return this.runInsert('insertOrAssign', keys, values, true);
  }

  find(keys: HostKeys<K>, options?: FindOptions): Promise<FindResult>;
  find(keys: DeviceArray<'u32'>): Promise<DeviceFindResult>;
  find(keys: KeysInput<K>, options: FindOptions = {}): Promise<FindResult | DeviceFindResult> {
    return this.runOp('find', async () => {
      const where = `${this.#owner}.find`;
      const spec = this.engine.keySpec;
      if (keys instanceof DeviceArray) {
        // Device keys, device results: the caller owns them from here.
        const batch = await this.stage('find', keys);
        const values = this.temporary(this.gpu.createArray('u32', batch.n, `${where}.values`));
        const found = this.temporary(this.gpu.createArray('u32', batch.n, `${where}.found`));
        const encoder = this.gpu.device.createCommandEncoder();
        this.engine.encodeFind(encoder, batch.keys, batch.n, values.buffer, found.buffer);
        this.gpu.submit([encoder.finish()]);
        return { values: this.keep(values), found: this.keep(found) };
      }
      // Host keys: answers read back into the caller's arrays (or fresh ones), large batches in
      // pipelined chunks; reserved keys of large u32 batches counted on the GPU on the way.
      const onDevice = spec.wordsPerKey === 1 && spec.firstReserved !== undefined && hostKeyCount(spec, keys) >= GPU_RESERVED_SCAN_MIN;
      const words = hostKeyWords(spec, keys, where, !onDevice);
      const n = words.length / spec.wordsPerKey;
      const out = checkFindOut(options.out, n, where);
      const answers = out ?? { values: new Uint32Array(n), found: new Uint8Array(n) };
      await findInChunks(this.gpu, this.engine, spec, words, answers, where, onDevice, DictionaryTable.findChunkKeys);
      return answers;
    });
  }

  async contains(keys: HostKeys<K>): Promise<Uint8Array> {
    return (await this.find(keys)).found;
  }

  erase(keys: KeysInput<K>): Promise<number> {
    return this.runOp('erase', async () => {
      const batch = await this.stage('erase', keys);
      const before = this.engine.size;
      const encoder = this.gpu.device.createCommandEncoder();
      this.engine.encodeErase(encoder, batch.keys, batch.n);
      this.gpu.submit([encoder.finish()]);
      const report = await this.engine.refresh();
      const erased = before - this.engine.size;
      if (this.engine.growth) await this.engine.afterErase();
      this.throwIfRefused('erase', report, erased);
      return erased;
    });
  }

  /**
   * A mixed batch: every op runs concurrently with the others. A find of a key that an insert in
   * the same batch adds may or may not see it (and sees its value if it does); a find never sees a
   * value that was not stored under its key. Ops on distinct keys give the sequential outcome.
   */
  apply(batch: ApplyBatch<K>): Promise<ApplyResult>;
  apply(batch: DeviceApplyBatch): Promise<DeviceApplyResult>;
  apply(batch: ApplyBatch<K> | DeviceApplyBatch): Promise<ApplyResult | DeviceApplyResult> {
    return this.runOp('apply', async () => {
      if (batch === null || typeof batch !== 'object')
        throw new InvalidArgumentError(`${this.#owner}.apply: batch must be { ops, keys, values? }, got ${describeValue(batch)}`);
      const device = batch.keys instanceof DeviceArray;
      if (!this.engine.applyBatch || !this.capabilities.has(device ? 'device-apply' : 'apply')) {
        throw new InvalidArgumentError(
          `${this.#owner}.apply: this table does not run mixed batches from ${device ? 'device' : 'host'} arrays`,
        );
      }
      const staged = device ? this.stageDeviceApply(batch as DeviceApplyBatch) : await this.stageHostApply(batch as ApplyBatch<K>);
      // How many ops of a device batch insert is only known on the device: room as if all of them did.
      const inserts = staged.hostOps ? staged.hostOps.reduce((c, op) => c + (op <= 1 ? 1 : 0), 0) : staged.n;
      if (this.engine.growth && !this.engine.fits(inserts)) await this.engine.makeRoom(await this.newKeysOfInserts(staged, inserts));
      const out = this.gpu.createArray('u32', 2 * staged.n, `${this.#owner}.apply.out`);
      if (!device) this.#temporaries.push(out);
      try {
        const report = await this.engine.applyBatch(staged, out.buffer);
        if (this.engine.growth) await this.engine.afterErase();
        if (device) {
          const result = { out, failed: report.failed };
          await this.throwIfRefusedOnDevice(report, batch as DeviceApplyBatch, result);
          return result;
        }
        const both = await this.gpu.download(out);
        const values = new Uint32Array(staged.n);
        const status = new Uint8Array(staged.n);
        for (let i = 0; i < staged.n; i++) {
          values[i] = both[2 * i] as number;
          status[i] = both[2 * i + 1] as number;
        }
        return { values, status, failed: report.failed };
      } catch (error) {
        out.destroy();
        throw error;
      }
    });
  }

  /** Removes every key (keeps the capacity). */
  clear(): Promise<void> {
    return this.runOp('clear', async () => {
      const encoder = this.gpu.device.createCommandEncoder();
      this.engine.encodeClear(encoder);
      this.gpu.submit([encoder.finish()]);
    });
  }

  /** Every live pair, in no particular order. */
  retrieveAll(): Promise<RetrieveResult<K>> {
    return this.runOp('retrieveAll', async () => {
      const count = this.engine.size;
      const words = this.engine.keySpec.wordsPerKey;
      const keys = this.temporary(this.gpu.createArray('u32', count * words, `${this.#owner}.retrieve.keys`));
      const values = this.temporary(this.gpu.createArray('u32', count, `${this.#owner}.retrieve.values`));
      const cursor = this.temporary(this.gpu.createArray('u32', 1, `${this.#owner}.retrieve.cursor`));
      const encoder = this.gpu.device.createCommandEncoder();
      this.engine.encodeRetrieve(encoder, keys.buffer, values.buffer, cursor.buffer);
      // The cursor, keys and values in one readback (the size is known up front).
      const [written, keyBytes, valueBytes] = await this.gpu.submitAndRead(encoder, [
        { buffer: cursor.buffer, byteLength: 4 },
        { buffer: keys.buffer, byteLength: 4 * count * words },
        { buffer: values.buffer, byteLength: 4 * count },
      ]);
      const n = new Uint32Array(written as ArrayBuffer)[0] as number;
      if (n !== count) throw new InternalError(`${this.#owner}.retrieveAll: the table holds ${n} keys but its size says ${count}`);
      const hostKeys = words === 2 ? new BigUint64Array(keyBytes as ArrayBuffer) : new Uint32Array(keyBytes as ArrayBuffer);
      return { keys: hostKeys as RetrieveResult<K>['keys'], values: new Uint32Array(valueBytes as ArrayBuffer) };
    });
  }

  abstract stats(): Promise<DictionaryStats>;

  /** Reads the table's size and the last encoded batch's failed list back (submit the encoders first). */
  sync(): Promise<SyncResult> {
    return this.runOp('sync', async () => {
      const report = this.#encodedReport ?? (await this.engine.refresh());
      this.#encodedReport = undefined;
      return { size: this.engine.size, failed: report.failed, refused: report.reserved };
    });
  }

  /**
   * Frees the table's GPU memory, once the host operations already called have settled (they
   * reject with DestroyedError). Later calls throw DestroyedError.
   */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    if (this.#pending === 0) this.destroyEngine();
  }

  // ---- device-side API -----------------------------------------------------------------------

  encodeClear(encoder: GPUCommandEncoder): void {
    this.assertEncodable('encodeClear');
    this.engine.encodeClear(encoder);
    // Commands run in order: every later encode sees an empty table, and the size is known.
    this.#stale = false;
    this.#encodedReport = undefined;
  }

  encodeInsert(encoder: GPUCommandEncoder, keys: GPUBuffer, values: GPUBuffer, n: number, options: EncodeInsertOptions = {}): unknown {
    this.assertEncodable('encodeInsert', n);
    this.#stale = true;
    return this.engine.encodeInsert(encoder, keys, values, n, options);
  }

  encodeFind(
    encoder: GPUCommandEncoder,
    keys: GPUBuffer,
    n: number,
    outValues: GPUBuffer,
    outFound: GPUBuffer,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    this.assertEncodable('encodeFind', n);
    this.engine.encodeFind(encoder, keys, n, outValues, outFound, timestampWrites);
  }

  encodeErase(encoder: GPUCommandEncoder, keys: GPUBuffer, n: number, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.assertEncodable('encodeErase', n);
    this.#stale = true;
    this.engine.encodeErase(encoder, keys, n, timestampWrites);
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
    this.assertEncodable('encodeApply', n);
    if (!this.engine.encodeApply) throw new InvalidArgumentError(`${this.#owner}.encodeApply: this table does not run mixed batches`);
    this.#stale = true;
    this.engine.encodeApply(encoder, ops, keys, values, n, out, timestampWrites);
  }

  reserveBatch(n: number): void {
    this.assertEncodable('reserveBatch', n);
    this.engine.reserveBatch(n);
  }

  // ---- for table packages ----------------------------------------------------------------------

  /**
   * Runs a host operation: in call order on the Gpu's queue (with its error scopes), refused once
   * the table is destroyed, after reading the counters back if encodes left them stale; buffers
   * staged inside are destroyed when it ends.
   */
  protected runOp<T>(op: string, body: () => Promise<T>): Promise<T> {
    const name = `${this.#owner}.${op}`;
    if (this.#destroyed) return Promise.reject(new DestroyedError(`this ${this.#owner}`));
    this.#pending++;
    const result = this.gpu.run(name, async () => {
      if (this.#destroyed) throw new DestroyedError(`this ${this.#owner}`);
      // Encoders recorded before this operation were submitted before it (the device-side rule).
      this.engine.scratch.flushRetired();
      if (this.#stale) await this.refreshAfterEncodes();
      try {
        const value = await body();
        if (this.#destroyed) throw new DestroyedError(`this ${this.#owner}`);
        return value;
      } finally {
        for (const t of this.#temporaries) t.destroy();
        this.#temporaries = [];
      }
    });
    return result.finally(() => {
      this.#pending--;
      if (this.#destroyed && this.#pending === 0) this.destroyEngine();
    });
  }

  /** A device array to destroy when the running host operation ends. */
  protected temporary<T extends { destroy(): void }>(array: T): T {
    this.#temporaries.push(array);
    return array;
  }

  /**
   * A u32 array for the running host operation, from the Gpu's buffer pool and given back when the
   * operation ends: large batches then reuse their buffers instead of allocating and freeing them
   * per call (13.7 ms for a 256 MiB array on an H100). Not zeroed; the buffer may be larger.
   */
  protected scratch(length: number, label: string): DeviceArray<'u32'> {
    const buffer = this.gpu.pool.acquire(Math.max(4, 4 * length), STORAGE_USAGE, label);
    this.#temporaries.push({ destroy: () => this.gpu.pool.release(buffer) });
    return DeviceArray.wrap(buffer, length, 'u32');
  }

  /** A host array copied into a scratch array (through mapped staging buffers when large). */
  private async uploadScratch(data: Uint32Array, label: string): Promise<DeviceArray<'u32'>> {
    const array = this.scratch(data.length, label);
    await this.gpu.writeStaged(array.buffer, data);
    return array;
  }

  /** Takes an array back from the running operation's temporaries: the caller owns it now. */
  private keep<T extends { destroy(): void }>(array: T): T {
    this.#temporaries = this.#temporaries.filter((t) => t !== array);
    return array;
  }

  /** Checks and uploads a host batch (or takes a device one) for the running host operation. */
  protected async stage(op: string, keys: KeysInput<K>, values?: ValuesInput): Promise<StagedBatch> {
    const where = `${this.#owner}.${op}`;
    const spec = this.engine.keySpec;
    let n: number;
    let keyBuffer: GPUBuffer;
    let hostWords: Uint32Array | undefined;
    if (keys instanceof DeviceArray) {
      n = deviceKeyCount(spec, keys, where);
      keyBuffer = keys.buffer;
    } else {
      const onDevice =
        spec.wordsPerKey === 1 && spec.firstReserved !== undefined && keys instanceof Uint32Array && keys.length >= GPU_RESERVED_SCAN_MIN;
      hostWords = hostKeyWords(spec, keys, where, !onDevice);
      n = hostWords.length / spec.wordsPerKey;
      keyBuffer = (await this.uploadScratch(hostWords, `${where}.keys`)).buffer;
      if (onDevice) await this.refuseReservedOnDevice(where, spec, hostWords, keyBuffer);
    }
    if (values === undefined) return { n, keys: keyBuffer, values: undefined, hostWords };
    checkValues(values, n, where);
    const valueBuffer = values instanceof DeviceArray ? values.buffer : (await this.uploadScratch(values, `${where}.values`)).buffer;
    return { n, keys: keyBuffer, values: valueBuffer, hostWords };
  }

  /**
   * The reserved-key check of a large host batch, on the GPU after its upload: a count read back
   * (one small round trip) instead of a host pass over every key. A refused batch is then scanned
   * on the host for the indices its error names; nothing has run on it.
   */
  private async refuseReservedOnDevice(where: string, spec: KeySpec<K>, words: Uint32Array, buffer: GPUBuffer): Promise<void> {
    const count = this.temporary(this.gpu.createArray('u32', 1, `${where}.reserved-count`));
    const encoder = this.gpu.device.createCommandEncoder();
    countReservedKernel.encode(this.gpu, encoder, {
      buffers: { words: buffer, count: count.buffer },
      params: { n: words.length, first: spec.firstReserved ?? 0 },
      invocations: words.length,
      maxWorkgroups: 4096,
      label: 'count-reserved',
    });
    const [bytes] = await this.gpu.submitAndRead(encoder, [{ buffer: count.buffer, byteLength: 4 }]);
    if (new Uint32Array(bytes as ArrayBuffer)[0] !== 0)
      throw new ReservedKeyError(where, reservedIndices(spec, words), spec.reservedNames, 'none');
  }

  // ---- internals -----------------------------------------------------------------------------

  private runInsert(op: string, keys: KeysInput<K>, values: ValuesInput, assign: boolean): Promise<InsertResult> {
    return this.runOp(op, async () => {
      if (values === undefined) throw new InvalidArgumentError(`${this.#owner}.${op}: values are missing`);
      const batch = await this.stage(op, keys, values);
      const before = this.engine.size;
      if (this.engine.growth && !this.engine.fits(batch.n)) await this.engine.makeRoom(await this.countNewKeys(batch));
      let report: FailureReport;
      for (let attempt = 0; ; attempt++) {
        report = await this.engine.insertBatch(batch, assign, attempt);
        if (report.failed.length === 0 || (await this.engine.afterInsertFailures(report, attempt)) === 'report') break;
      }
      const result = { inserted: this.engine.size - before, failed: report.failed };
      this.throwIfRefused(op, report, result);
      return result;
    });
  }

  /**
   * How many keys of a batch are not in the table yet (distinct ones, for host keys): a lookup
   * pass, so that a batch of few distinct keys, or of keys already present, grows nothing.
   */
  private async countNewKeys(batch: StagedBatch): Promise<number> {
    const found = this.temporary(this.gpu.createArray('u32', batch.n, `${this.#owner}.new-keys`));
    const values = this.temporary(this.gpu.createArray('u32', batch.n, `${this.#owner}.new-keys.values`));
    const encoder = this.gpu.device.createCommandEncoder();
    this.engine.encodeFind(encoder, batch.keys, batch.n, values.buffer, found.buffer);
    this.gpu.submit([encoder.finish()]);
    const flags = await this.gpu.download(found);
    const words = batch.hostWords;
    if (!words) return flags.reduce((count, f) => count + (f === 0 ? 1 : 0), 0);
    return distinctUnflagged(words, this.engine.keySpec.wordsPerKey, flags);
  }

  /**
   * The room a mixed batch's inserts need: from host arrays, the distinct insert keys not yet in
   * the table (a lookup pass over them); from device arrays, every op.
   */
  private async newKeysOfInserts(staged: StagedApply, inserts: number): Promise<number> {
    const { hostOps, hostWords } = staged;
    if (!hostOps || !hostWords) return inserts;
    const perKey = this.engine.keySpec.wordsPerKey;
    const words = new Uint32Array(inserts * perKey);
    let o = 0;
    for (let i = 0; i < staged.n; i++) {
      if ((hostOps[i] as number) > Op.insertOrAssign) continue;
      words.set(hostWords.subarray(i * perKey, (i + 1) * perKey), o);
      o += perKey;
    }
    const keys = this.temporary(await this.gpu.uploadStaged(words, `${this.#owner}.apply.insert-keys`)).buffer;
    return this.countNewKeys({ n: inserts, keys, values: undefined, hostWords: words });
  }

  private async stageHostApply(batch: ApplyBatch<K>): Promise<StagedApply> {
    const where = `${this.#owner}.apply`;
    const spec = this.engine.keySpec;
    const hostWords = hostKeyWords(spec, batch.keys, where);
    const n = hostWords.length / spec.wordsPerKey;
    const { words: hostOps } = validateOps(where, batch.ops, n);
    if (batch.values !== undefined) checkValues(batch.values, n, where);
    const upload = async (a: Uint32Array, what: string) => this.temporary(await this.gpu.uploadStaged(a, `${where}.${what}`)).buffer;
    const hostValues = batch.values ?? new Uint32Array(n);
    return {
      n,
      ops: await upload(hostOps, 'ops'),
      keys: await upload(hostWords, 'keys'),
      values: await upload(hostValues, 'values'),
      hostWords,
      hostOps,
      hostValues,
    };
  }

  private stageDeviceApply(batch: DeviceApplyBatch): StagedApply {
    const where = `${this.#owner}.apply`;
    const n = deviceKeyCount(this.engine.keySpec, batch.keys, where);
    for (const [name, a] of [
      ['ops', batch.ops],
      ['values', batch.values],
    ] as const) {
      if (a === undefined) continue;
      if (!(a instanceof DeviceArray) || a.type !== 'u32')
        throw new InvalidArgumentError(`${where}: ${name} must be a DeviceArray<'u32'> like keys, got ${describeValue(a)}`);
      if (a.length !== n) throw new InvalidArgumentError(`${where}: ${name} has ${a.length} entries but keys has ${n}`);
    }
    const values = batch.values?.buffer ?? this.temporary(this.gpu.createArray('u32', n, `${where}.values`)).buffer;
    return { n, ops: batch.ops.buffer, keys: batch.keys.buffer, values, hostWords: undefined, hostOps: undefined, hostValues: undefined };
  }

  /** Device batches are checked on the GPU: refused entries come back flagged in the failed list. */
  private throwIfRefused(op: string, report: FailureReport, partial: unknown): void {
    if (report.reserved.length > 0) {
      throw new ReservedKeyError(`${this.#owner}.${op}`, report.reserved, this.engine.keySpec.reservedNames, 'others', partial);
    }
  }

  /** A device mixed batch's refused entries: a reserved key or an op code out of range (read back to tell which). */
  private async throwIfRefusedOnDevice(report: FailureReport, batch: DeviceApplyBatch, partial: DeviceApplyResult): Promise<void> {
    const first = report.reserved[0];
    if (first === undefined) return;
    const op = (await this.gpu.download(batch.ops, 1, first))[0] as number;
    if (op > 3) throw new InvalidOpError(`${this.#owner}.apply`, first, op, 'others');
    this.throwIfRefused('apply', report, partial);
  }

  private async refreshAfterEncodes(): Promise<void> {
    this.#stale = false;
    // Kept for sync(): a host operation before it resets the device's failed list.
    this.#encodedReport = await this.engine.refresh();
  }

  private assertEncodable(op: string, n?: number): void {
    if (this.#destroyed) throw new DestroyedError(`this ${this.#owner}`);
    this.gpu.assertUsable();
    if (this.#pending > 0) throw new TableBusyError(`${this.#owner}.${op}`, op);
    if (n !== undefined && !(Number.isSafeInteger(n) && n >= 0))
      throw new InvalidArgumentError(`${this.#owner}.${op}: n must be a non-negative integer, got ${String(n)}`);
  }

  private destroyEngine(): void {
    if (this.#engineDestroyed) return;
    this.#engineDestroyed = true;
    this.engine.scratch.destroy();
    this.engine.destroy();
  }
}
