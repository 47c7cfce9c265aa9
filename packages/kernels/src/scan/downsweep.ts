import { composeWgsl } from '../compose';
import { gridModule } from '../grid';
import { type ScanConfig, scanConfigKey, scanConstants, validateScanConfig } from './config';
import { blockScanModule, scanParamsModule } from './workgroup';

/**
 * What the scan pass does with each element's exclusive prefix:
 * - `scan`: write it to `dst`. Bindings: 0 params, 1 `scan_src` (read), 2 `offsets` (read), 3 `dst` (read_write).
 * - `scan-in-place`: overwrite the input (WebGPU forbids binding one buffer as read and read_write
 *   in one pass). Bindings: 0 params, 1 `offsets` (read), 2 `scan_src` (read_write).
 * - `compact`: scatter the kept elements (flags != 0) to dense outputs at their prefix, and write
 *   the number kept to `count[count_index]` (fused: the prefix array is never stored).
 *   Bindings: 0 params, 1 `scan_src` = flags (read), 2 `offsets` (read), 3 `count` (read_write),
 *   then if `values`: `values` (read), `out_values` (read_write); then if `indices`: `out_indices` (read_write).
 */
export type ScanDownsweepVariant =
  | { readonly kind: 'scan' }
  | { readonly kind: 'scan-in-place' }
  | { readonly kind: 'compact'; readonly values: boolean; readonly indices: boolean };

/** A stable key for a variant, for pipeline cache keys. */
export function downsweepVariantKey(variant: ScanDownsweepVariant): string {
  if (variant.kind !== 'compact') return variant.kind;
  return `compact${variant.values ? '.values' : ''}${variant.indices ? '.indices' : ''}`;
}

function bindings(variant: ScanDownsweepVariant): string[] {
  switch (variant.kind) {
    case 'scan':
      return [
        'var<storage, read> scan_src: array<u32>',
        'var<storage, read> offsets: array<u32>',
        'var<storage, read_write> dst: array<u32>',
      ];
    case 'scan-in-place':
      return ['var<storage, read> offsets: array<u32>', 'var<storage, read_write> scan_src: array<u32>'];
    case 'compact':
      return [
        'var<storage, read> scan_src: array<u32>',
        'var<storage, read> offsets: array<u32>',
        'var<storage, read_write> count: array<u32>',
        ...(variant.values ? ['var<storage, read> values: array<u32>', 'var<storage, read_write> out_values: array<u32>'] : []),
        ...(variant.indices ? ['var<storage, read_write> out_indices: array<u32>'] : []),
      ];
  }
}

function emit(variant: ScanDownsweepVariant): string {
  switch (variant.kind) {
    case 'scan':
      return 'fn scan_emit(i: u32, prefix: u32) { dst[i] = prefix; }';
    case 'scan-in-place':
      return 'fn scan_emit(i: u32, prefix: u32) { scan_src[i] = prefix; }';
    case 'compact': {
      const writes = [variant.values ? 'out_values[prefix] = values[i];' : '', variant.indices ? 'out_indices[prefix] = i;' : ''].join(' ');
      return /* wgsl */ `
fn scan_emit(i: u32, prefix: u32) {
  let keep = scan_src[i] != 0u;
  // Outputs smaller than the kept set drop the overflow; the count still tells the caller.
  if (keep && prefix < scan_params.capacity) { ${writes} }
  if (i + 1u == scan_params.n) { count[scan_params.count_index] = prefix + select(0u, 1u, keep); }
}`;
    }
  }
}

/**
 * WGSL of the scan pass (the downsweep of reduce-then-scan): each block is scanned in workgroup
 * memory, `offsets[block]` (the scanned block sums) is added when `use_offsets` is set, and each
 * element's exclusive prefix goes where the variant says. Workgroups grid-stride over blocks.
 */
export function scanDownsweepWgsl(config: ScanConfig, variant: ScanDownsweepVariant): string {
  validateScanConfig(config);
  if (variant.kind === 'compact' && !variant.values && !variant.indices) {
    throw new RangeError('scan: a compaction must write values, indices or both');
  }
  const decls = bindings(variant)
    .map((d, i) => `@group(0) @binding(${i + 1}) ${d};`)
    .join('\n');
  const zeroCount =
    variant.kind === 'compact' ? 'if (scan_params.n == 0u && first_block == 0u && lid == 0u) { count[scan_params.count_index] = 0u; }' : '';
  return composeWgsl(
    /* wgsl */ `
// variant: ${downsweepVariantKey(variant)}, ${scanConfigKey(config)}
@group(0) @binding(0) var<uniform> scan_params: ScanParams;
${decls}

${emit(variant)}

@compute @workgroup_size(SCAN_WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let first_block = grid_workgroup(wid, nwg);
  ${zeroCount}
  // Loop bounds come from workgroup ids and uniforms only, so the barriers inside stay uniform.
  for (var block = first_block; block < scan_params.blocks; block += nwg.x * nwg.y) {
    let base = block * SCAN_BLOCK;
    var offset = 0u;
    if (scan_params.use_offsets != 0u) { offset = offsets[block]; }
    scan_block_exclusive(lid, base, offset);
    for (var j = 0u; j < SCAN_ITEMS; j++) {
      let k = j * SCAN_WG + lid;
      if (base + k < scan_params.n) { scan_emit(base + k, scan_data[scan_slot(k)]); }
    }
    workgroupBarrier();
  }
}
`,
    { modules: [gridModule, scanParamsModule, blockScanModule], constants: scanConstants(config) },
  );
}
