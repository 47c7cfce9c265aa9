/** Small helpers for the inline SVG charts: no chart library, so nothing to load from outside. */

export interface Scale {
  (value: number): number;
  ticks: number[];
}

/** Round tick values (1, 2, 5 times a power of ten) covering [min, max]. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power) as number;
  const first = Math.ceil(min / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let t = first; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/**
 * Maps [min, max] onto [from, to] (pixels; to < from for a y axis). With `zero`, the domain
 * starts at 0 so that bar heights and line heights compare honestly.
 */
export function linearScale(values: number[], from: number, to: number, options: { zero?: boolean; pad?: number } = {}): Scale {
  let min = values.length ? Math.min(...values) : 0;
  let max = values.length ? Math.max(...values) : 1;
  if (options.zero) min = Math.min(0, min);
  if (max === min) max = min + 1;
  const pad = (options.pad ?? 0) * (max - min);
  const ticks = niceTicks(min, max + pad);
  const hi = Math.max(max + pad, ticks[ticks.length - 1] ?? max);
  const lo = Math.min(min, ticks[0] ?? min);
  const scale = ((v: number) => from + ((v - lo) / (hi - lo)) * (to - from)) as Scale;
  scale.ticks = ticks;
  return scale;
}

/** An SVG path through points, skipping none. */
export function linePath(points: [number, number][]): string {
  return points.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
}
