/**
 * The compute entry point every grid-strided kernel opens with: `main`, with the workgroup id,
 * local index and grid size under the names the loops of `loops.ts` and `gridModule` use
 * (`wid`, `lid`, `nwg`).
 */

/** A workgroup size as WGSL: a number (gets its `u` suffix where an expression needs one) or a constant's name. */
export type WorkgroupSizeExpr = number | string;

export function checkWorkgroupSize(size: WorkgroupSizeExpr, where: string): void {
  if (typeof size === 'number' && (!Number.isInteger(size) || size < 1 || size > 1024)) {
    throw new RangeError(`${where}: workgroup size must be an integer in [1, 1024], got ${size}`);
  }
  if (typeof size === 'string' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(size)) {
    throw new RangeError(`${where}: workgroup size '${size}' is neither a number nor a constant's name`);
  }
}

/** `256u` for a number, the name itself for a constant. */
export function workgroupSizeValue(size: WorkgroupSizeExpr): string {
  return typeof size === 'number' ? `${size}u` : size;
}

/**
 * `@compute @workgroup_size(N)` and the signature of `main`, without its body. `extraBuiltins`
 * are further parameters, e.g. `cooperativeEntryParams({ subgroups })` for cooperative kernels
 * (a trailing comma is dropped).
 */
export function entryPoint(workgroupSize: WorkgroupSizeExpr, extraBuiltins = ''): string {
  checkWorkgroupSize(workgroupSize, 'entryPoint');
  // cooperativeEntryParams ends with a comma; WGSL takes one, but the signature reads better without.
  const extra = extraBuiltins.trim().replace(/,$/, '');
  return `@compute @workgroup_size(${workgroupSize})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>${
    extra ? `, ${extra}` : ''
  })`;
}
