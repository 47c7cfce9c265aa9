import {
  type CompactOutputs,
  compactWithScanWgsl,
  DEFAULT_SCAN_CONFIG,
  downsweepVariantKey,
  packScanParams,
  type ScanConfig,
  type ScanDownsweepVariant,
  type ScanParams,
  scanBlockSize,
  scanConfigKey,
  scanDownsweepWgsl,
  scanReduceWgsl,
  scanWorkgroupBytes,
  validateScanConfig,
} from '@gpuhash/kernels';
import { DeviceArray } from './device-array';
import { InvalidArgumentError, LimitExceededError } from './errors';
import type { Gpu } from './gpu';
import type { Binding, Kernel } from './kernel';
import type { GpuTimer } from './timing';
import { BufferUsage, STORAGE_USAGE } from './usage';

/**
 * Device-wide exclusive scan (reduce-then-scan, recursing over levels of block sums) and stream
 * compaction. Sizes travel in uniforms, so one pipeline per block shape serves every n.
 */

/** Options of a scan or compaction. */
export interface ScanOptions {
  /** Block shape (pipeline constants). Default 256 threads x 8 items. */
  config?: ScanConfig;
  /** Scan `x != 0 ? 1 : 0` instead of `x` (the positions a compaction of these flags uses). */
  countNonzero?: boolean;
  /** Cap on workgroups per pass; workgroups grid-stride over the remaining blocks. */
  maxWorkgroups?: number;
  /** Times every pass (one timer slot each) when given. */
  timer?: GpuTimer;
}

// ---------------------------------------------------------------- kernels, built once per specialisation

const kernelCache = new Map<string, Kernel>();

function cachedKernel(name: string, cacheKey: string, workgroupSize: number, source: () => string): Kernel {
  const key = `${name}[${cacheKey}]`;
  let kernel = kernelCache.get(key);
  if (!kernel) {
    kernel = { name, cacheKey, workgroupSize, source: source() };
    kernelCache.set(key, kernel);
  }
  return kernel;
}

function reduceKernel(config: ScanConfig): Kernel {
  return cachedKernel('kernels.scan.reduce', scanConfigKey(config), config.workgroupSize, () => scanReduceWgsl(config));
}

function downsweepKernel(config: ScanConfig, variant: ScanDownsweepVariant): Kernel {
  const key = `${scanConfigKey(config)}.${downsweepVariantKey(variant)}`;
  return cachedKernel('kernels.scan.downsweep', key, config.workgroupSize, () => scanDownsweepWgsl(config, variant));
}

const COMPACT_WORKGROUP = 256;

function compactWithScanKernel(outputs: CompactOutputs): Kernel {
  const key = `wg${COMPACT_WORKGROUP}${outputs.values ? '.values' : ''}${outputs.indices ? '.indices' : ''}`;
  return cachedKernel('kernels.scan.compact', key, COMPACT_WORKGROUP, () => compactWithScanWgsl(COMPACT_WORKGROUP, outputs));
}

// ---------------------------------------------------------------- validation

function resolveConfig(gpu: Gpu, config: ScanConfig | undefined): ScanConfig {
  const c = config ?? DEFAULT_SCAN_CONFIG;
  try {
    validateScanConfig(c);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
  const limits = gpu.limits;
  if (c.workgroupSize > limits.maxComputeInvocationsPerWorkgroup || c.workgroupSize > limits.maxComputeWorkgroupSizeX) {
    throw new LimitExceededError(
      'scan workgroup',
      'maxComputeInvocationsPerWorkgroup',
      c.workgroupSize,
      Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX),
      'Use a smaller scan workgroupSize.',
    );
  }
  const bytes = scanWorkgroupBytes(c);
  if (bytes > limits.maxComputeWorkgroupStorageSize) {
    throw new LimitExceededError(
      'scan workgroup memory',
      'maxComputeWorkgroupStorageSize',
      bytes,
      limits.maxComputeWorkgroupStorageSize,
      'Use fewer scan itemsPerThread.',
    );
  }
  return c;
}

function checkCount(gpu: Gpu, n: number, what: string): void {
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${what}: n must be a non-negative integer, got ${n}`);
  gpu.checkBufferSize(n * 4, `${what} of ${n} elements`);
}

/** Throws unless `buffer` holds `words` u32s (at least one: bindings cannot be empty). */
function checkHolds(buffer: GPUBuffer, words: number, what: string): void {
  const bytes = Math.max(1, words) * 4;
  if (buffer.size < bytes) throw new InvalidArgumentError(`${what}: the buffer has ${buffer.size} bytes but ${bytes} are needed`);
}

/** The first `words` u32s of a buffer (at least one). */
function range(buffer: GPUBuffer, words: number): Binding {
  return { buffer, offset: 0, size: Math.max(1, words) * 4 };
}

function scratch(gpu: Gpu, words: number, label: string): GPUBuffer {
  return gpu.pool.acquire(words * 4, BufferUsage.STORAGE, label);
}

// ---------------------------------------------------------------- encoding

interface Pass {
  gpu: Gpu;
  encoder: GPUCommandEncoder;
  config: ScanConfig;
  maxWorkgroups: number | undefined;
  timer: GpuTimer | undefined;
}

function encodePass(ctx: Pass, kernel: Kernel, params: ScanParams, bindings: Binding[], label: string): void {
  const uniforms = ctx.gpu.uniforms(packScanParams(params));
  ctx.gpu.encodeDispatch(
    ctx.encoder,
    kernel,
    {
      bindings: [uniforms, ...bindings],
      invocations: params.blocks * ctx.config.workgroupSize,
      maxWorkgroups: ctx.maxWorkgroups,
      label,
    },
    ctx.timer?.slot(label),
  );
  ctx.gpu.pool.release(uniforms);
}

/**
 * Reduces the level's blocks and scans their sums (recursively) into a scratch buffer of
 * per-block offsets, or returns undefined when the level is one block (it needs no offsets).
 * The caller releases the returned buffers after encoding its downsweep.
 */
function encodeBlockOffsets(
  ctx: Pass,
  src: GPUBuffer,
  n: number,
  countNonzero: boolean,
  level: number,
): { offsets: GPUBuffer; release: GPUBuffer[] } | undefined {
  const blocks = Math.ceil(n / scanBlockSize(ctx.config));
  if (blocks <= 1) return undefined;
  const sums = scratch(ctx.gpu, blocks, 'gpuhash.scan.sums');
  const offsets = scratch(ctx.gpu, blocks, 'gpuhash.scan.offsets');
  encodePass(ctx, reduceKernel(ctx.config), { n, blocks, countNonzero }, [range(src, n), range(sums, blocks)], `scan.reduce.${level}`);
  encodeScanLevel(ctx, sums, offsets, blocks, false, level + 1);
  return { offsets, release: [sums, offsets] };
}

function encodeScanLevel(ctx: Pass, src: GPUBuffer, dst: GPUBuffer, n: number, countNonzero: boolean, level: number): void {
  const blocks = Math.ceil(n / scanBlockSize(ctx.config));
  const below = encodeBlockOffsets(ctx, src, n, countNonzero, level);
  const inPlace = src === dst;
  const params: ScanParams = { n, blocks, countNonzero, useOffsets: below !== undefined };
  if (inPlace) {
    // The offsets binding cannot alias the read_write data: a tiny stand-in when there are none.
    const dummy = below ? undefined : scratch(ctx.gpu, 1, 'gpuhash.scan.no-offsets');
    const offsets = below?.offsets ?? (dummy as GPUBuffer);
    encodePass(
      ctx,
      downsweepKernel(ctx.config, { kind: 'scan-in-place' }),
      params,
      [range(offsets, blocks), range(dst, n)],
      `scan.downsweep.${level}`,
    );
    if (dummy) ctx.gpu.pool.release(dummy);
  } else {
    // Without offsets the binding is unused: the (read-only) input stands in for it.
    const offsets = below?.offsets ?? src;
    encodePass(
      ctx,
      downsweepKernel(ctx.config, { kind: 'scan' }),
      params,
      [range(src, n), range(offsets, blocks), range(dst, n)],
      `scan.downsweep.${level}`,
    );
  }
  for (const b of below?.release ?? []) ctx.gpu.pool.release(b);
}

/**
 * Encodes the exclusive scan (prefix sums mod 2^32) of the first `n` u32s of `input` into `output`
 * (`output[i] = input[0] + ... + input[i-1]`). `output` may be `input` (in place). Nothing is
 * encoded for n = 0. Scratch buffers come from `gpu.pool` and are released once encoded: submit
 * this encoder before any other `gpu.submit`, which recycles them.
 */
export function encodeExclusiveScan(
  gpu: Gpu,
  encoder: GPUCommandEncoder,
  input: GPUBuffer,
  output: GPUBuffer,
  n: number,
  options: ScanOptions = {},
): void {
  const config = resolveConfig(gpu, options.config);
  checkCount(gpu, n, 'exclusive scan');
  checkHolds(input, n, 'exclusive scan input');
  checkHolds(output, n, 'exclusive scan output');
  if (n === 0) return;
  encodeScanLevel(
    { gpu, encoder, config, maxWorkgroups: options.maxWorkgroups, timer: options.timer },
    input,
    output,
    n,
    options.countNonzero ?? false,
    0,
  );
}

/** Exclusive scan (mod 2^32) of a device array into a new one of the same length. */
export function exclusiveScan(gpu: Gpu, input: DeviceArray<'u32'>, options: ScanOptions = {}): Promise<DeviceArray<'u32'>> {
  return gpu.run('exclusiveScan', async () => {
    if (input.type !== 'u32') throw new InvalidArgumentError(`exclusiveScan: expected a u32 array, got ${input.type}`);
    const output = gpu.createArray('u32', input.length, 'gpuhash.scan.output');
    const encoder = gpu.device.createCommandEncoder({ label: 'gpuhash.exclusiveScan' });
    encodeExclusiveScan(gpu, encoder, input.buffer, output.buffer, input.length, options);
    gpu.submit([encoder.finish()]);
    return output;
  });
}

/** Where a compaction reads and writes. Every buffer is u32 words; `count` must not be an output buffer. */
export interface CompactTargets {
  /** Keep element i where `flags[i] != 0`. */
  flags: GPUBuffer;
  n: number;
  /** Values to scatter (with `output`). */
  values?: GPUBuffer;
  /** Receives the kept values, densely and in order. Kept elements beyond its size are dropped. */
  output?: GPUBuffer;
  /** Receives the indices of the kept elements. Kept elements beyond its size are dropped. */
  indices?: GPUBuffer;
  /** Receives the number kept (device-resident: never read back unless you do). */
  count: GPUBuffer;
  /** Word of `count` that receives it. Default 0. */
  countIndex?: number;
}

interface CompactBindings {
  outputs: CompactOutputs;
  capacity: number;
  tail: Binding[];
  count: Binding;
}

function compactBindings(gpu: Gpu, t: CompactTargets, what: string): CompactBindings {
  checkCount(gpu, t.n, what);
  if ((t.values === undefined) !== (t.output === undefined)) throw new InvalidArgumentError(`${what}: give values and output together`);
  if (!t.output && !t.indices) throw new InvalidArgumentError(`${what}: give output (with values), indices, or both`);
  const countIndex = t.countIndex ?? 0;
  if (!Number.isInteger(countIndex) || countIndex < 0)
    throw new InvalidArgumentError(`${what}: countIndex must be a non-negative integer, got ${countIndex}`);
  checkHolds(t.flags, t.n, `${what} flags`);
  checkHolds(t.count, countIndex + 1, `${what} count`);
  if (t.values) checkHolds(t.values, t.n, `${what} values`);
  // Outputs need not hold n: the kernel writes up to their capacity.
  const outs = [t.output, t.indices].filter((b): b is GPUBuffer => b !== undefined);
  const capacity = Math.min(t.n, ...outs.map((b) => Math.floor(b.size / 4)));
  for (const b of outs) checkHolds(b, 1, `${what} output`);
  const tail: Binding[] = [];
  if (t.values && t.output) tail.push(range(t.values, t.n), range(t.output, capacity));
  if (t.indices) tail.push(range(t.indices, capacity));
  return {
    outputs: { values: t.output !== undefined, indices: t.indices !== undefined },
    capacity,
    tail,
    count: range(t.count, countIndex + 1),
  };
}

/**
 * Encodes a stream compaction: the values (and/or indices) of elements whose flag is nonzero, in
 * order, densely into `output` (and/or `indices`), and the number kept into `count[countIndex]`,
 * for every n including 0. The scan of the flags is fused into the scatter (never stored).
 * Options: `config` and `maxWorkgroups` as for the scan.
 */
export function encodeCompact(gpu: Gpu, encoder: GPUCommandEncoder, targets: CompactTargets, options: ScanOptions = {}): void {
  const config = resolveConfig(gpu, options.config);
  const b = compactBindings(gpu, targets, 'compact');
  const ctx: Pass = { gpu, encoder, config, maxWorkgroups: options.maxWorkgroups, timer: options.timer };
  const n = targets.n;
  const blocks = Math.ceil(n / scanBlockSize(config));
  const below = n > 0 ? encodeBlockOffsets(ctx, targets.flags, n, true, 0) : undefined;
  const params: ScanParams = {
    n,
    blocks,
    countNonzero: true,
    useOffsets: below !== undefined,
    countIndex: targets.countIndex ?? 0,
    capacity: b.capacity,
  };
  const offsets = below?.offsets ?? targets.flags;
  encodePass(
    ctx,
    downsweepKernel(config, { kind: 'compact', ...b.outputs }),
    params,
    [range(targets.flags, n), range(offsets, blocks), b.count, ...b.tail],
    'compact.downsweep',
  );
  for (const buffer of below?.release ?? []) gpu.pool.release(buffer);
}

/**
 * Encodes a compaction from a scan the caller already has: `scan` must be the exclusive scan of
 * the 0/1 flags (`encodeExclusiveScan` with `countNonzero`). Writes as `encodeCompact` does.
 */
export function encodeCompactWithScan(
  gpu: Gpu,
  encoder: GPUCommandEncoder,
  targets: CompactTargets & { scan: GPUBuffer },
  options: Pick<ScanOptions, 'maxWorkgroups' | 'timer'> = {},
): void {
  const b = compactBindings(gpu, targets, 'compactWithScan');
  checkHolds(targets.scan, targets.n, 'compactWithScan scan');
  const uniforms = gpu.uniforms(new Uint32Array([targets.n, targets.countIndex ?? 0, b.capacity, 0]));
  gpu.encodeDispatch(
    encoder,
    compactWithScanKernel(b.outputs),
    {
      bindings: [uniforms, range(targets.flags, targets.n), range(targets.scan, targets.n), b.count, ...b.tail],
      invocations: targets.n,
      maxWorkgroups: options.maxWorkgroups,
      label: 'compact.scatter',
    },
    options.timer?.slot('compact.scatter'),
  );
  gpu.pool.release(uniforms);
}

/** The result of `compact`: arrays of length `count` (their buffers hold n elements). */
export interface CompactedArrays {
  values: DeviceArray<'u32'>;
  /** Present when asked for with `{ indices: true }`. */
  indices?: DeviceArray<'u32'>;
  count: number;
}

/**
 * Keeps the elements of `values` whose flag is nonzero, in order, in a new device array; reads
 * back only the count. With `{ indices: true }` also returns the kept elements' indices.
 */
export function compact(
  gpu: Gpu,
  values: DeviceArray<'u32'>,
  flags: DeviceArray<'u32'>,
  options: ScanOptions & { indices?: boolean } = {},
): Promise<CompactedArrays> {
  return gpu.run('compact', async () => {
    if (values.type !== 'u32' || flags.type !== 'u32')
      throw new InvalidArgumentError(`compact: expected u32 arrays, got ${values.type} values and ${flags.type} flags`);
    if (values.length !== flags.length)
      throw new InvalidArgumentError(`compact: ${values.length} values but ${flags.length} flags; give one flag per value`);
    const n = values.length;
    const output = gpu.createArray('u32', n, 'gpuhash.compact.values');
    const indices = options.indices ? gpu.createArray('u32', n, 'gpuhash.compact.indices') : undefined;
    const count = gpu.pool.acquire(4, STORAGE_USAGE, 'gpuhash.compact.count');
    try {
      const encoder = gpu.device.createCommandEncoder({ label: 'gpuhash.compact' });
      encodeCompact(
        gpu,
        encoder,
        { flags: flags.buffer, n, values: values.buffer, output: output.buffer, indices: indices?.buffer, count },
        options,
      );
      gpu.submit([encoder.finish()]);
      const kept = new Uint32Array(await gpu.readBytes(count, 0, 4))[0] as number;
      return {
        values: new DeviceArray(output.buffer, kept, 'u32', true),
        indices: indices ? new DeviceArray(indices.buffer, kept, 'u32', true) : undefined,
        count: kept,
      };
    } catch (error) {
      output.destroy();
      indices?.destroy();
      throw error;
    } finally {
      gpu.pool.release(count);
    }
  });
}
