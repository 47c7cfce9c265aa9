/**
 * Element-wise comparison that reports the first mismatches with their indices and the inputs
 * that produced them, instead of a diff of two huge arrays.
 */
export class MismatchError extends Error {
  constructor(
    readonly what: string,
    readonly mismatches: number,
    readonly firstIndex: number,
    detail: string,
  ) {
    super(`${what}: ${mismatches} mismatching element(s); first at index ${firstIndex}\n${detail}`);
    this.name = 'MismatchError';
  }
}

type Numeric = ArrayLike<number>;

export function expectSameArrays(what: string, actual: Numeric, expected: Numeric, inputs: Record<string, Numeric> = {}, show = 5): void {
  if (actual.length !== expected.length) {
    throw new MismatchError(
      what,
      Math.abs(actual.length - expected.length),
      Math.min(actual.length, expected.length),
      `length ${actual.length}, expected ${expected.length}`,
    );
  }
  const bad: number[] = [];
  let count = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i] as number;
    const e = expected[i] as number;
    if (a === e || (Number.isNaN(a) && Number.isNaN(e))) continue;
    count++;
    if (bad.length < show) bad.push(i);
  }
  if (count === 0) return;
  const hex = (v: number | undefined) => (v === undefined ? '-' : Number.isInteger(v) && v >= 0 ? `0x${v.toString(16)}` : String(v));
  const lines = bad.map((i) => {
    const ins = Object.entries(inputs)
      .map(([k, arr]) => `${k}=${hex(arr[i])}`)
      .join(' ');
    return `  [${i}] ${ins}${ins ? ' ' : ''}got ${hex(actual[i])}, expected ${hex(expected[i])}`;
  });
  throw new MismatchError(what, count, bad[0] ?? 0, lines.join('\n'));
}
