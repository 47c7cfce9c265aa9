/** Number formatting shared by the playground and the benchmark pages. */

/** Operations per second with an SI prefix: "412 M ops/s". */
export function formatRate(opsPerSecond: number): string {
  if (!Number.isFinite(opsPerSecond)) return '-';
  const units: [number, string][] = [
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [scale, prefix] of units) {
    if (opsPerSecond >= scale) return `${significant(opsPerSecond / scale)} ${prefix}ops/s`;
  }
  return `${significant(opsPerSecond)} ops/s`;
}

/** Three significant digits, no exponent. */
export function significant(x: number): string {
  if (x === 0) return '0';
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x))));
  return x.toFixed(Math.min(digits, 6));
}

/** 2^k for exact powers of two, else the plain number with thousands separators. */
export function formatCount(n: number): string {
  const k = Math.log2(n);
  if (Number.isInteger(k) && k >= 10) return `2^${k} (${n.toLocaleString('en-US')})`;
  return n.toLocaleString('en-US');
}

/** A load factor to four decimals: "0.5000". */
export function formatLoad(load: number): string {
  return load.toFixed(4);
}

/** An axis tick: as few digits as the value needs ("0.08", "5", "12.5"). */
export function formatTick(x: number): string {
  return String(Number(x.toPrecision(6)));
}

/** The SI unit that keeps a rate's numbers readable: [divisor, label]. */
export function rateUnit(maxOpsPerSecond: number): [number, string] {
  if (maxOpsPerSecond >= 1e9) return [1e9, 'G ops/s'];
  if (maxOpsPerSecond >= 1e6) return [1e6, 'M ops/s'];
  if (maxOpsPerSecond >= 1e3) return [1e3, 'k ops/s'];
  return [1, 'ops/s'];
}
