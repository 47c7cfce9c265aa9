/** Summary of repeated measurements (milliseconds). */
export interface Stats {
  median: number;
  min: number;
  max: number;
  /** (max - min) / median: the relative range of the repetitions (0 when they agree). */
  spread: number;
  /** How many repetitions the summary covers. */
  n: number;
}

/** The median (mean of the middle two for an even count). Throws on an empty list. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new RangeError('median of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Median, extremes and relative spread of repeated measurements. */
export function summarize(samples: readonly number[]): Stats {
  const m = median(samples);
  const min = Math.min(...samples);
  const max = Math.max(...samples);
  return { median: m, min, max, spread: m > 0 ? (max - min) / m : 0, n: samples.length };
}

/** Billions of operations per second from an operation count and milliseconds; null when time is 0. */
export function gops(ops: number, ms: number): number | null {
  return ms > 0 ? ops / ms / 1e6 : null;
}
