import { InvalidArgumentError } from './errors';
/**
 * Workgroup grids that never exceed the per-dimension limit (65,535 on every device today).
 * Kernels read their linear workgroup index as `wid.y * nwg.x + wid.x` (see @gpuhash/kernels'
 * `gridModule`) and loop with a stride of `nwg.x * nwg.y * WORKGROUP_SIZE`, so any grid shape covers
 * any number of items.
 */
export interface Grid {
  x: number;
  y: number;
  /** Invocations launched: x * y * workgroupSize (at least `invocations`, unless capped). */
  threads: number;
}

/**
 * The workgroup grid for `invocations` invocations: folded into x and y within the device's
 * per-dimension limit, kernels grid-striding over any remainder.
 */
export function dispatchGrid(
  invocations: number,
  workgroupSize: number,
  maxPerDimension = 65_535,
  maxWorkgroups = Number.POSITIVE_INFINITY,
): Grid {
  if (!Number.isInteger(invocations) || invocations < 0) {
    throw new InvalidArgumentError(`dispatchGrid: invocations must be a non-negative integer, got ${invocations}`);
  }
  if (!Number.isInteger(workgroupSize) || workgroupSize < 1) {
    throw new InvalidArgumentError(`dispatchGrid: workgroupSize must be a positive integer, got ${workgroupSize}`);
  }
  const wanted = Math.max(1, Math.min(Math.ceil(invocations / workgroupSize), maxWorkgroups));
  const x = Math.min(wanted, maxPerDimension);
  // Round y down when the total would exceed what two dimensions hold: the grid-stride loop covers the rest.
  const y = Math.min(Math.ceil(wanted / x), maxPerDimension);
  return { x, y, threads: x * y * workgroupSize };
}
