/**
 * CPU twins of the scan kernels: the GPU results must equal these bit for bit.
 */

/** Exclusive prefix sums mod 2^32; with `countNonzero`, of `x != 0 ? 1 : 0` (what compaction scans). */
export function exclusiveScanCpu(input: Uint32Array, countNonzero = false): Uint32Array {
  const out = new Uint32Array(input.length);
  let running = 0;
  for (let i = 0; i < input.length; i++) {
    out[i] = running;
    const v = input[i] as number;
    running = (running + (countNonzero ? (v !== 0 ? 1 : 0) : v)) >>> 0;
  }
  return out;
}

/** Sum mod 2^32 of each block of `blockSize` elements (the reduce pass). */
export function scanBlockSumsCpu(input: Uint32Array, blockSize: number, countNonzero = false): Uint32Array {
  const out = new Uint32Array(Math.ceil(input.length / blockSize));
  for (let i = 0; i < input.length; i++) {
    const v = input[i] as number;
    const b = Math.floor(i / blockSize);
    out[b] = ((out[b] as number) + (countNonzero ? (v !== 0 ? 1 : 0) : v)) >>> 0;
  }
  return out;
}

/** The result of a compaction: kept values and their indices, in input order. */
export interface CompactResult {
  values: Uint32Array;
  indices: Uint32Array;
  count: number;
}

/** Keeps `values[i]` (and `i`) where `flags[i] != 0`, in order. */
export function compactCpu(values: Uint32Array, flags: Uint32Array): CompactResult {
  if (values.length !== flags.length) throw new RangeError(`compactCpu: ${values.length} values but ${flags.length} flags`);
  let count = 0;
  for (let i = 0; i < flags.length; i++) if (flags[i] !== 0) count++;
  const outValues = new Uint32Array(count);
  const outIndices = new Uint32Array(count);
  let o = 0;
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === 0) continue;
    outValues[o] = values[i] as number;
    outIndices[o] = i;
    o++;
  }
  return { values: outValues, indices: outIndices, count };
}
