import type { Gpu } from '../gpu';
import type { ScratchArena } from './scratch';

/**
 * Marks on the batch indices a kernel writes to a failed list: the entry held a reserved key (or,
 * in a mixed batch, an op code out of range), or an insert gave up on contended locks (it runs
 * again; not a full table). The index is in the low 30 bits.
 */
export const FailureFlag = { reserved: 0x8000_0000, contended: 0x4000_0000, indexMask: 0x3fff_ffff } as const;

/** A failed list read back and sorted out. */
export interface FailureReport {
  /** Failures the kernels counted (exact, even where the list kept fewer indices). */
  count: number;
  /** Batch indices of entries that were not applied (reserved ones excluded; contended ones included), ascending. */
  failed: Uint32Array;
  /** Batch indices refused as reserved keys or bad op codes, ascending. */
  reserved: Uint32Array;
  /** Of `failed`, those that lost contended locks, ascending. */
  contended: Uint32Array;
  /** The list held fewer indices than `count`. */
  truncated: boolean;
}

/** The report of a batch in which every insert was placed (shared, frozen). */
export const NO_FAILURES: FailureReport = Object.freeze({
  count: 0,
  failed: new Uint32Array(0),
  reserved: new Uint32Array(0),
  contended: new Uint32Array(0),
  truncated: false,
});

/** Sorts a failed list's raw entries (`count` counted, `raw` the indices kept) into a report. */
export function decodeFailures(count: number, raw: Uint32Array): FailureReport {
  if (count === 0) return NO_FAILURES;
  const failed: number[] = [];
  const reserved: number[] = [];
  const contended: number[] = [];
  for (const word of raw) {
    const index = word & FailureFlag.indexMask;
    if (word & FailureFlag.reserved) reserved.push(index);
    else {
      failed.push(index);
      if (word & FailureFlag.contended) contended.push(index);
    }
  }
  const sorted = (a: number[]) => Uint32Array.from(a).sort();
  return { count, failed: sorted(failed), reserved: sorted(reserved), contended: sorted(contended), truncated: raw.length < count };
}

/** Concatenates reports of consecutive chunks of one batch (indices already batch-relative). */
export function mergeFailures(reports: readonly FailureReport[]): FailureReport {
  if (reports.length === 1) return reports[0] as FailureReport;
  const join = (pick: (r: FailureReport) => Uint32Array) => {
    const all = new Uint32Array(reports.reduce((s, r) => s + pick(r).length, 0));
    let o = 0;
    for (const r of reports) {
      all.set(pick(r), o);
      o += pick(r).length;
    }
    return all.sort();
  };
  return {
    count: reports.reduce((s, r) => s + r.count, 0),
    failed: join((r) => r.failed),
    reserved: join((r) => r.reserved),
    contended: join((r) => r.contended),
    truncated: reports.some((r) => r.truncated),
  };
}

/**
 * A device failed list: word 0 counts failures (atomically, exactly), then as many batch indices as
 * fit (the WGSL side is @gpuhash/kernels' failureListModule). It grows through the table's
 * scratch arena, so a larger batch never destroys a list an earlier encode still uses.
 */
export class FailureList {
  private entries = 0;

  constructor(
    private readonly scratch: ScratchArena,
    private readonly name = 'failed',
  ) {
    this.reserve(1024);
  }

  /** The list's buffer (valid until a larger batch is reserved). */
  get buffer(): GPUBuffer {
    return this.scratch.get(this.name, 4 * (this.entries + 1));
  }

  /** Indices the list keeps. */
  get capacity(): number {
    return this.entries;
  }

  /** Makes the list hold the indices of a batch of n. */
  reserve(n: number): void {
    if (n <= this.entries) return;
    this.entries = Math.max(n, 2 * this.entries);
    this.scratch.get(this.name, 4 * (this.entries + 1));
  }

  /** Sizes the list for a batch of n and zeroes its count. */
  encodeReset(encoder: GPUCommandEncoder, n: number): void {
    this.reserve(n);
    encoder.clearBuffer(this.buffer, 0, 4);
  }

  /** Reads the list back: its count is word `count` of the caller's report (read with the counters). */
  async read(gpu: Gpu, count: number): Promise<FailureReport> {
    const kept = Math.min(count, this.entries);
    const raw = kept === 0 ? new Uint32Array(0) : new Uint32Array(await gpu.readBytes(this.buffer, 4, 4 * kept));
    return decodeFailures(count, raw);
  }
}
