import { InvalidArgumentError } from './errors';
import type { Gpu } from './gpu';
import { BufferUsage, MapMode } from './usage';

/** GPU time of one labelled compute pass, in milliseconds, from timestamp queries. */
export interface PassTime {
  label: string;
  ms: number;
}

/** GPU times of the passes of one timed submission, and their total (wall-clock without timestamp queries). */
export interface TimingResult {
  /** Per-pass GPU times; empty when the device has no timestamp queries. */
  passes: PassTime[];
  /** Sum of the passes, or the wall-clock time from submit to completion without timestamps. */
  totalMs: number;
  source: 'timestamp' | 'wall-clock';
}

/**
 * Times compute passes with timestamp queries (two per pass), falling back to wall-clock time of
 * the whole submission where the device lacks `timestamp-query`. Use: `slot(label)` in each
 * `beginComputePass`, `resolve(encoder)` once encoding is done, `submitted()` right after submit,
 * then `await read()`. A timer is reusable after `read()`.
 */
export class GpuTimer {
  private readonly querySet: GPUQuerySet | undefined;
  private readonly resolveBuffer: GPUBuffer | undefined;
  private readonly readBuffer: GPUBuffer | undefined;
  private labels: string[] = [];
  private submittedAt = 0;

  constructor(
    private readonly gpu: Gpu,
    readonly maxPasses = 64,
  ) {
    if (gpu.hasTimestamps) {
      const device = gpu.device;
      this.querySet = device.createQuerySet({ type: 'timestamp', count: maxPasses * 2, label: 'gpuhash.timer' });
      this.resolveBuffer = device.createBuffer({
        size: maxPasses * 16,
        usage: BufferUsage.QUERY_RESOLVE | BufferUsage.COPY_SRC,
        label: 'gpuhash.timer.resolve',
      });
      this.readBuffer = device.createBuffer({
        size: maxPasses * 16,
        usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST,
        label: 'gpuhash.timer.read',
      });
    }
  }

  get usesTimestamps(): boolean {
    return this.querySet !== undefined;
  }

  /** The `timestampWrites` for one more pass, or undefined without timestamp support. */
  slot(label: string): GPUComputePassTimestampWrites | undefined {
    if (!this.querySet) {
      this.labels.push(label);
      return undefined;
    }
    if (this.labels.length >= this.maxPasses)
      throw new InvalidArgumentError(`GpuTimer: more than ${this.maxPasses} passes timed; create the timer with a larger maxPasses`);
    const i = this.labels.length;
    this.labels.push(label);
    return { querySet: this.querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 };
  }

  resolve(encoder: GPUCommandEncoder): void {
    if (!this.querySet || !this.resolveBuffer || !this.readBuffer || this.labels.length === 0) return;
    const n = this.labels.length * 2;
    encoder.resolveQuerySet(this.querySet, 0, n, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, n * 8);
  }

  submitted(): void {
    this.submittedAt = performance.now();
  }

  async read(): Promise<TimingResult> {
    const labels = this.labels;
    this.labels = [];
    if (!this.readBuffer) {
      await this.gpu.guard(this.gpu.device.queue.onSubmittedWorkDone());
      const totalMs = performance.now() - this.submittedAt;
      return { passes: [], totalMs, source: 'wall-clock' };
    }
    await this.gpu.guard(this.readBuffer.mapAsync(MapMode.READ, 0, labels.length * 16));
    const stamps = new BigUint64Array(this.readBuffer.getMappedRange(0, labels.length * 16).slice(0));
    this.readBuffer.unmap();
    const passes = labels.map((label, i) => {
      const begin = stamps[2 * i] ?? 0n;
      const end = stamps[2 * i + 1] ?? 0n;
      return { label, ms: end > begin ? Number(end - begin) / 1e6 : 0 };
    });
    return { passes, totalMs: passes.reduce((s, p) => s + p.ms, 0), source: 'timestamp' };
  }

  destroy(): void {
    this.querySet?.destroy();
    this.resolveBuffer?.destroy();
    this.readBuffer?.destroy();
  }
}

/**
 * One timing over a sequence of passes: `first` (for the first pass) writes only the beginning
 * timestamp and `last` (for the last pass) only the end one; both undefined without timestamps.
 */
export function timestampEnds(timestampWrites?: GPUComputePassTimestampWrites): {
  first?: GPUComputePassTimestampWrites;
  last?: GPUComputePassTimestampWrites;
} {
  if (!timestampWrites) return {};
  const { querySet, beginningOfPassWriteIndex, endOfPassWriteIndex } = timestampWrites;
  return { first: { querySet, beginningOfPassWriteIndex }, last: { querySet, endOfPassWriteIndex } };
}

/**
 * Times everything `body` encodes as one span: an empty pass carrying the beginning timestamp
 * before it and one carrying the end timestamp after it. Unlike timestamps on every pass (about
 * 8 us each on an H100), the span also counts what runs between the passes (clears, copies,
 * barriers). Without `timestampWrites` it only runs `body`.
 */
export function encodeTimedSpan(
  encoder: GPUCommandEncoder,
  timestampWrites: GPUComputePassTimestampWrites | undefined,
  body: () => void,
): void {
  const { first, last } = timestampEnds(timestampWrites);
  if (first) encoder.beginComputePass({ timestampWrites: first }).end();
  body();
  if (last) encoder.beginComputePass({ timestampWrites: last }).end();
}
