import { BufferPool } from './buffer-pool';
import { DeviceArray, ELEMENT_BYTES, type ElementType, elementTypeOf, type HostArrayOf, hostArrayType } from './device-array';
import { dispatchGrid } from './dispatch';
import {
  DestroyedError,
  DeviceLostError,
  GpuhashError,
  GpuOutOfMemoryError,
  GpuValidationError,
  InvalidArgumentError,
  LimitExceededError,
} from './errors';
import { fillKernel } from './fill-kernel';
import type { DispatchOptions, Kernel } from './kernel';
import { PipelineCache } from './pipeline-cache';
import { GpuTimer } from './timing';
import { BufferUsage, MapMode, STORAGE_USAGE } from './usage';

/** Whether the device has subgroups, and the range of subgroup sizes its adapter reports. */
export interface SubgroupInfo {
  /** Whether the device was created with the `subgroups` feature. */
  supported: boolean;
  /** Smallest and largest subgroup size the adapter reports (0 when unknown). */
  minSize: number;
  maxSize: number;
}

/** What a `Gpu` is built from: a device and what is known of its adapter (`requestGpu` fills it in). */
export interface GpuInit {
  device: GPUDevice;
  adapterInfo: GPUAdapterInfo | undefined;
  isSoftware: boolean;
  ownsDevice: boolean;
  subgroupMinSize: number;
  subgroupMaxSize: number;
}

/** Host arrays at least this large go up through mapped staging buffers (Gpu.writeStaged). */
export const STAGED_MIN_BYTES = 4 * 2 ** 20;
/** Bytes per staging buffer of Gpu.writeStaged. */
export const STAGED_CHUNK_BYTES = 16 * 2 ** 20;

/**
 * A WebGPU device and what gpuhash needs to know about it, with the per-device services every
 * table shares: the pipeline cache, the buffer pool, typed uploads and downloads, dispatch, timing,
 * and error handling (validation scopes, limits, destroy, device loss).
 */
export class Gpu {
  readonly device: GPUDevice;
  readonly adapterInfo: GPUAdapterInfo | undefined;
  readonly features: ReadonlySet<string>;
  readonly limits: GPUSupportedLimits;
  readonly isSoftware: boolean;
  readonly subgroups: SubgroupInfo;
  readonly hasTimestamps: boolean;
  readonly pipelines: PipelineCache;
  readonly pool: BufferPool;

  private readonly ownsDevice: boolean;
  private destroyedFlag = false;
  private lostError: DeviceLostError | undefined;
  private readonly lostWaiters = new Set<(e: DeviceLostError) => void>();
  private readonly lostListeners = new Set<(e: DeviceLostError) => void>();
  private operationChain: Promise<unknown> = Promise.resolve();

  constructor(init: GpuInit) {
    this.device = init.device;
    this.adapterInfo = init.adapterInfo;
    this.features = new Set(init.device.features as unknown as Iterable<string>);
    this.limits = init.device.limits;
    this.isSoftware = init.isSoftware;
    this.ownsDevice = init.ownsDevice;
    this.subgroups = {
      supported: this.features.has('subgroups'),
      minSize: init.subgroupMinSize,
      maxSize: init.subgroupMaxSize,
    };
    this.hasTimestamps = this.features.has('timestamp-query');
    this.pipelines = new PipelineCache(init.device);
    this.pool = new BufferPool(init.device);
    void init.device.lost.then((info) => this.handleLost(info.reason ?? 'unknown', info.message ?? ''));
  }

  /** A one-line description: adapter, software or not, subgroup sizes. */
  describe(): string {
    const i = this.adapterInfo;
    const name = i ? [i.vendor, i.architecture, i.device || i.description].filter(Boolean).join(' ') : 'caller-provided device';
    const sg = this.subgroups.supported ? `subgroups ${this.subgroups.minSize}-${this.subgroups.maxSize}` : 'no subgroups';
    return `${name}${this.isSoftware ? ' (software)' : ''}, ${sg}, timestamps ${this.hasTimestamps ? 'yes' : 'no'}`;
  }

  get isLost(): boolean {
    return this.lostError !== undefined;
  }

  get isDestroyed(): boolean {
    return this.destroyedFlag;
  }

  /** Throws DestroyedError or DeviceLostError if this Gpu can no longer be used. */
  assertUsable(): void {
    if (this.destroyedFlag) throw new DestroyedError('this Gpu');
    if (this.lostError) throw this.lostError;
  }

  /** Called once when the device is lost; returns an unsubscribe function. */
  onLost(listener: (error: DeviceLostError) => void): () => void {
    if (this.lostError) {
      listener(this.lostError);
      return () => {};
    }
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  private handleLost(reason: string, message: string): void {
    if (this.lostError) return;
    const error = new DeviceLostError(reason, message);
    this.lostError = error;
    // Everything cached for this device is now garbage.
    this.pipelines.clear();
    this.pool.clear();
    for (const reject of this.lostWaiters) reject(error);
    this.lostWaiters.clear();
    for (const listener of this.lostListeners) listener(error);
    this.lostListeners.clear();
  }

  /**
   * Resolves with `promise`, or rejects with DeviceLostError as soon as the device is lost (a
   * mapAsync or onSubmittedWorkDone pending on a lost device may otherwise never settle, or fail
   * with an untyped AbortError).
   */
  guard<T>(promise: Promise<T>): Promise<T> {
    if (this.lostError) {
      promise.catch(() => {});
      return Promise.reject(this.lostError);
    }
    return new Promise<T>((resolve, reject) => {
      const onLost = (e: DeviceLostError) => reject(e);
      this.lostWaiters.add(onLost);
      promise.then(
        (value) => {
          this.lostWaiters.delete(onLost);
          resolve(value);
        },
        (error: unknown) => {
          this.lostWaiters.delete(onLost);
          reject(this.lostError ?? error);
        },
      );
    });
  }

  /**
   * Runs one bulk operation: checks the Gpu is usable, orders it after the operations before it,
   * and turns WebGPU validation and out-of-memory errors raised inside it into typed errors.
   */
  run<T>(operation: string, body: () => Promise<T>): Promise<T> {
    const next = this.operationChain.then(
      () => this.runScoped(operation, body),
      () => this.runScoped(operation, body),
    );
    this.operationChain = next.catch(() => {});
    return next;
  }

  /**
   * Runs `build`, which allocates an object's GPU buffers (a table's create), as one operation
   * (run): should the device run out of memory or reject an allocation, the promise rejects with
   * the typed error after `release` has freed what `build` returned, so that a failed create keeps
   * nothing allocated.
   */
  async allocate<T>(operation: string, build: () => T, release: (built: T) => void): Promise<T> {
    let built: { value: T } | undefined;
    try {
      return await this.run(operation, async () => {
        built = { value: build() };
        return built.value;
      });
    } catch (error) {
      if (built) release(built.value);
      throw error;
    }
  }

  private async runScoped<T>(operation: string, body: () => Promise<T>): Promise<T> {
    this.assertUsable();
    const device = this.device;
    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    let result: T | undefined;
    let failure: unknown;
    let failed = false;
    try {
      result = await body();
    } catch (error) {
      failed = true;
      failure = error;
    }
    let validation: GPUError | null = null;
    let oom: GPUError | null = null;
    if (!this.lostError) {
      try {
        validation = await this.guard(device.popErrorScope());
        oom = await this.guard(device.popErrorScope());
      } catch (error) {
        if (!failed) {
          failed = true;
          failure = error;
        }
      }
    }
    if (this.lostError && !(failure instanceof GpuhashError && failure.code !== 'DEVICE_LOST')) throw this.lostError;
    // Out of memory first: the buffer that could not be had then fails validation wherever it is used.
    if (oom) throw new GpuOutOfMemoryError(operation, oom.message);
    if (validation) throw new GpuValidationError(operation, validation.message);
    if (failed) throw failure;
    return result as T;
  }

  /**
   * The largest power of two of elements of `elementBytes` bytes that one storage binding holds
   * (`maxStorageBufferBindingSize`, and `maxBufferSize`): the window or chunk size of arrays split
   * across bindings.
   */
  bindingElements(elementBytes: number): number {
    const bytes = Math.min(this.limits.maxStorageBufferBindingSize, this.limits.maxBufferSize);
    return 2 ** Math.floor(Math.log2(bytes / elementBytes));
  }

  /** Throws LimitExceededError when a buffer of `bytes` cannot exist or be bound on this device. */
  checkBufferSize(bytes: number, what: string, asBinding = true): void {
    if (bytes > this.limits.maxBufferSize) {
      throw new LimitExceededError(
        what,
        'maxBufferSize',
        bytes,
        this.limits.maxBufferSize,
        'Use a smaller capacity or batch, or split the data across several buffers.',
      );
    }
    if (asBinding && bytes > this.limits.maxStorageBufferBindingSize) {
      throw new LimitExceededError(
        what,
        'maxStorageBufferBindingSize',
        bytes,
        this.limits.maxStorageBufferBindingSize,
        'Use a smaller capacity or batch (tables split storage across bindings where they support it).',
      );
    }
  }

  /** A new storage buffer (STORAGE | COPY_SRC | COPY_DST unless `usage` says otherwise). */
  createBuffer(bytes: number, label: string, usage: number = STORAGE_USAGE): GPUBuffer {
    this.assertUsable();
    if (!Number.isInteger(bytes) || bytes < 0)
      throw new InvalidArgumentError(`${label}: buffer size must be a non-negative integer, got ${bytes}`);
    this.checkBufferSize(bytes, label, (usage & BufferUsage.STORAGE) !== 0);
    // Bindings need a non-zero size; round up to 4-byte multiples for writeBuffer.
    const size = Math.max(16, Math.ceil(bytes / 4) * 4);
    return this.device.createBuffer({ size, usage, label });
  }

  /** An uninitialised-to-zero device array of `length` elements. */
  createArray<T extends ElementType>(type: T, length: number, label = `gpuhash.array<${type}>`): DeviceArray<T> {
    if (!Number.isInteger(length) || length < 0)
      throw new InvalidArgumentError(`${label}: length must be a non-negative integer, got ${length}`);
    return new DeviceArray(this.createBuffer(length * ELEMENT_BYTES, label), length, type, true);
  }

  /** Copies a host array to a new device array of the matching element type. */
  upload(data: Uint32Array, label?: string): DeviceArray<'u32'>;
  upload(data: Int32Array, label?: string): DeviceArray<'i32'>;
  upload(data: Float32Array, label?: string): DeviceArray<'f32'>;
  upload(data: Uint32Array | Int32Array | Float32Array, label?: string): DeviceArray<ElementType>;
  upload(data: Uint32Array | Int32Array | Float32Array, label = 'gpuhash.upload'): DeviceArray<ElementType> {
    const array = this.createArray(elementTypeOf(data), data.length, label);
    this.write(array.buffer, data);
    return array;
  }

  /** Writes a host array into a buffer at a byte offset (queued; ordered before later submissions). */
  write(buffer: GPUBuffer, data: Uint32Array | Int32Array | Float32Array, byteOffset = 0): void {
    this.assertUsable();
    if (data.byteLength === 0) return;
    this.device.queue.writeBuffer(buffer, byteOffset, data.buffer, data.byteOffset, data.byteLength);
  }

  /**
   * Copies a host array to a new device array, through mapped staging buffers when it is large
   * (see writeStaged). Resolves once the copies are submitted; later submissions see the data.
   */
  async uploadStaged(data: Uint32Array, label?: string): Promise<DeviceArray<'u32'>>;
  async uploadStaged(data: Float32Array, label?: string): Promise<DeviceArray<'f32'>>;
  async uploadStaged(data: Uint32Array | Int32Array | Float32Array, label?: string): Promise<DeviceArray<ElementType>>;
  async uploadStaged(data: Uint32Array | Int32Array | Float32Array, label = 'gpuhash.upload'): Promise<DeviceArray<ElementType>> {
    const array = this.createArray(elementTypeOf(data), data.length, label);
    try {
      await this.writeStaged(array.buffer, data);
    } catch (error) {
      array.destroy();
      throw error;
    }
    return array;
  }

  /**
   * Writes a host array into a buffer like write(), but a large one (STAGED_MIN_BYTES and up) goes
   * through two pooled, mapped staging buffers in turn, STAGED_CHUNK_BYTES at a time: the array is
   * copied into mapped memory and the GPU copies it on. On an H100 (Dawn, Vulkan) that moved 6.7 GB/s
   * where one writeBuffer of 256 MiB moved 1.2 GB/s (Dawn copies a large write into a fresh staging
   * allocation first). Resolves once the last copy is submitted.
   */
  async writeStaged(buffer: GPUBuffer, data: Uint32Array | Int32Array | Float32Array | Uint8Array, byteOffset = 0): Promise<void> {
    this.assertUsable();
    const total = data.byteLength;
    if (total % 4 !== 0 || byteOffset % 4 !== 0)
      throw new InvalidArgumentError(`writeStaged: ${total} bytes at byte ${byteOffset}: both must be multiples of 4`);
    if (total < STAGED_MIN_BYTES) {
      if (total > 0) this.device.queue.writeBuffer(buffer, byteOffset, data.buffer, data.byteOffset, total);
      return;
    }
    const chunk = STAGED_CHUNK_BYTES;
    const usage = BufferUsage.MAP_WRITE | BufferUsage.COPY_SRC;
    const staging = [this.pool.acquire(chunk, usage, 'gpuhash.staging.write'), this.pool.acquire(chunk, usage, 'gpuhash.staging.write')];
    const bytes = new Uint8Array(data.buffer, data.byteOffset, total);
    try {
      for (let at = 0, k = 0; at < total; at += chunk, k++) {
        const s = staging[k & 1] as GPUBuffer;
        const len = Math.min(chunk, total - at);
        // Waits for the GPU's copy out of this buffer two chunks ago.
        await this.guard(s.mapAsync(MapMode.WRITE, 0, len));
        new Uint8Array(s.getMappedRange(0, len)).set(bytes.subarray(at, at + len));
        s.unmap();
        const encoder = this.device.createCommandEncoder({ label: 'gpuhash.staging.write' });
        encoder.copyBufferToBuffer(s, 0, buffer, byteOffset + at, len);
        this.submit([encoder.finish()]);
      }
    } finally {
      for (const s of staging) this.pool.release(s);
    }
  }

  /** Reads `length` elements (default: all) of a device array back to the host. */
  async download<T extends ElementType>(array: DeviceArray<T>, length = array.length, offset = 0): Promise<HostArrayOf<T>> {
    const bytes = await this.readBytes(array.buffer, offset * ELEMENT_BYTES, length * ELEMENT_BYTES);
    const Ctor = hostArrayType(array.type);
    return new Ctor(bytes) as HostArrayOf<T>;
  }

  /** Reads a byte range of any COPY_SRC buffer back to the host. */
  async readBytes(buffer: GPUBuffer, byteOffset: number, byteLength: number): Promise<ArrayBuffer> {
    this.assertUsable();
    if (byteLength === 0) return new ArrayBuffer(0);
    const encoder = this.device.createCommandEncoder({ label: 'gpuhash.download' });
    return (await this.submitAndRead(encoder, [{ buffer, byteOffset, byteLength }]))[0] as ArrayBuffer;
  }

  /**
   * Submits `encoder` with copies of `parts` into one pooled staging buffer appended, maps it once,
   * and returns each part's bytes (one copy each, out of the mapped range): one round trip for
   * several results of one operation. A part with `into` is copied into that array instead (its
   * entry in the result is empty).
   */
  async submitAndRead(
    encoder: GPUCommandEncoder,
    parts: ReadonlyArray<{ buffer: GPUBuffer; byteOffset?: number; byteLength: number; into?: ArrayBufferView }>,
  ): Promise<ArrayBuffer[]> {
    this.assertUsable();
    // Copies need 4-byte multiples at 4-byte offsets.
    const spans = parts.map((p) => Math.ceil(p.byteLength / 4) * 4);
    const total = spans.reduce((a, b) => a + b, 0);
    if (total === 0) {
      this.submit([encoder.finish()]);
      return parts.map(() => new ArrayBuffer(0));
    }
    const staging = this.pool.acquire(total, BufferUsage.MAP_READ | BufferUsage.COPY_DST, 'gpuhash.staging.read');
    let at = 0;
    for (const [i, p] of parts.entries()) {
      if (spans[i]) encoder.copyBufferToBuffer(p.buffer, p.byteOffset ?? 0, staging, at, spans[i] as number);
      at += spans[i] as number;
    }
    this.submit([encoder.finish()]);
    try {
      await this.guard(staging.mapAsync(MapMode.READ, 0, total));
      const range = staging.getMappedRange(0, total);
      at = 0;
      const out = parts.map((p, i) => {
        let copy: ArrayBuffer;
        if (p.into) {
          // Into the caller's array: no fresh allocation (whose page faults cost as much as the copy).
          new Uint8Array(p.into.buffer, p.into.byteOffset, p.byteLength).set(new Uint8Array(range, at, p.byteLength));
          copy = new ArrayBuffer(0);
        } else copy = range.slice(at, at + p.byteLength);
        at += spans[i] as number;
        return copy;
      });
      staging.unmap();
      return out;
    } finally {
      this.pool.release(staging);
    }
  }

  /** Fills `count` 32-bit words of a buffer with `value`, on the GPU. */
  encodeFill(encoder: GPUCommandEncoder, buffer: GPUBuffer, value: number, count: number, byteOffset = 0): void {
    if (value === 0) {
      encoder.clearBuffer(buffer, byteOffset, count * 4);
      return;
    }
    fillKernel.encode(this, encoder, {
      buffers: { data: buffer },
      params: { n: count, value: value >>> 0, base: byteOffset / 4 },
      invocations: count,
      maxWorkgroups: 4096,
      label: 'fill',
    });
  }

  /** A small uniform buffer holding `data` (pooled: released after the next submit). */
  uniforms(data: Uint32Array | Int32Array | Float32Array): GPUBuffer {
    this.assertUsable();
    const buffer = this.pool.acquire(Math.max(16, data.byteLength), BufferUsage.UNIFORM | BufferUsage.COPY_DST, 'gpuhash.uniforms');
    this.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    return buffer;
  }

  /** The compiled pipeline of a kernel, from this device's cache. */
  pipeline(kernel: Kernel): GPUComputePipeline {
    this.assertUsable();
    return this.pipelines.get(kernel);
  }

  /** Encodes one compute pass running `kernel` over `options.invocations` (folded into a legal grid). */
  encodeDispatch(
    encoder: GPUCommandEncoder,
    kernel: Kernel,
    options: DispatchOptions,
    timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const pipeline = this.pipeline(kernel);
    const bindGroup = this.device.createBindGroup({
      label: kernel.name,
      layout: pipeline.getBindGroupLayout(0),
      entries: options.bindings.map((b, binding) => ({
        binding,
        resource: 'buffer' in b ? { buffer: b.buffer, offset: b.offset, size: b.size } : { buffer: b },
      })),
    });
    const pass = encoder.beginComputePass({ label: options.label ?? kernel.name, timestampWrites });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    if (options.indirect) {
      pass.dispatchWorkgroupsIndirect(options.indirect.buffer, options.indirect.offset);
    } else {
      const grid = dispatchGrid(
        options.invocations,
        kernel.workgroupSize,
        this.limits.maxComputeWorkgroupsPerDimension,
        options.maxWorkgroups,
      );
      pass.dispatchWorkgroups(grid.x, grid.y);
    }
    pass.end();
  }

  /** Encodes and submits one kernel. */
  dispatch(kernel: Kernel, options: DispatchOptions): void {
    const encoder = this.device.createCommandEncoder({ label: kernel.name });
    this.encodeDispatch(encoder, kernel, options);
    this.submit([encoder.finish()]);
  }

  /** Submits command buffers; pooled buffers released before this become reusable. */
  submit(commandBuffers: GPUCommandBuffer[]): void {
    this.assertUsable();
    this.device.queue.submit(commandBuffers);
    this.pool.afterSubmit();
  }

  /** Waits for all submitted work (rejects with DeviceLostError if the device is lost meanwhile). */
  async finish(): Promise<void> {
    this.assertUsable();
    await this.guard(this.device.queue.onSubmittedWorkDone());
  }

  createTimer(maxPasses?: number): GpuTimer {
    this.assertUsable();
    return new GpuTimer(this, maxPasses);
  }

  /** Releases pooled buffers and cached pipelines; destroys the device if requestGpu created it. */
  destroy(): void {
    if (this.destroyedFlag) return;
    this.destroyedFlag = true;
    this.pipelines.clear();
    this.pool.clear();
    if (this.ownsDevice) this.device.destroy();
  }
}
