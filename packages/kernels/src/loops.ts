import { checkWorkgroupSize, type WorkgroupSizeExpr, workgroupSizeValue } from './entry';

/**
 * Loop heads over a dispatch's items, for bodies inside `entryPoint` (they read `wid`, `lid`,
 * `nwg`) in kernels that include `gridModule`. `count` is a WGSL expression, e.g. `params.n`.
 */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One item per invocation: `index` runs over 0 .. count - 1 with the whole grid as stride (lanes diverge at the end). */
export function gridStrideLoop(index: string, count: string, workgroupSize: WorkgroupSizeExpr): string {
  if (!IDENTIFIER.test(index)) throw new RangeError(`gridStrideLoop: '${index}' is not an identifier`);
  checkWorkgroupSize(workgroupSize, 'gridStrideLoop');
  const wg = workgroupSizeValue(workgroupSize);
  return `for (var ${index} = grid_thread(wid, nwg, lid, ${wg}); ${index} < ${count}; ${index} += grid_threads(nwg, ${wg}))`;
}

/**
 * Whole-workgroup chunks: `base` is the first item of the workgroup's chunk and every lane runs the
 * same iterations (its item `base + lid` may be past `count`), so cooperative groups and barriers
 * stay converged.
 */
export function chunkLoop(count: string, workgroupSize: WorkgroupSizeExpr, base = 'base'): string {
  if (!IDENTIFIER.test(base)) throw new RangeError(`chunkLoop: '${base}' is not an identifier`);
  checkWorkgroupSize(workgroupSize, 'chunkLoop');
  const wg = workgroupSizeValue(workgroupSize);
  return `for (var ${base} = grid_workgroup(wid, nwg) * ${wg}; ${base} < ${count}; ${base} += grid_threads(nwg, ${wg}))`;
}

/**
 * A loop unrolled into text: \`line(k)\` for k = 0 .. count - 1, joined by \`separator\`. For WGSL
 * that keeps k-th values in variables of their own (\`w0\`, \`w1\`, ...), where an array indexed
 * by a loop variable may go to function memory.
 */
export function unrolled(count: number, line: (k: number) => string, separator = '\n'): string {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`unrolled: ${count} is not a count`);
  return Array.from({ length: count }, (_, k) => line(k)).join(separator);
}
