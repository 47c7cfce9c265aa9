import { composeWgsl } from '../compose';
import { gridModule } from '../grid';
import { type ScanConfig, scanConstants, validateScanConfig } from './config';
import { blockScanModule, scanParamsModule } from './workgroup';

/**
 * WGSL of the reduce pass: the sum (mod 2^32) of each block of `scan_src` into `block_sums`.
 * Bindings: 0 `scan_params` (uniform ScanParams), 1 `scan_src` (read), 2 `block_sums` (read_write,
 * `blocks` words). Dispatch `blocks * workgroupSize` invocations or fewer: workgroups grid-stride over blocks.
 */
export function scanReduceWgsl(config: ScanConfig): string {
  validateScanConfig(config);
  return composeWgsl(
    /* wgsl */ `
@group(0) @binding(0) var<uniform> scan_params: ScanParams;
@group(0) @binding(1) var<storage, read> scan_src: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_sums: array<u32>;

@compute @workgroup_size(SCAN_WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  // Loop bounds come from workgroup ids and uniforms only, so the barriers inside stay uniform.
  for (var block = grid_workgroup(wid, nwg); block < scan_params.blocks; block += nwg.x * nwg.y) {
    let base = block * SCAN_BLOCK;
    var sum = 0u;
    for (var j = 0u; j < SCAN_ITEMS; j++) { sum += scan_load(base + j * SCAN_WG + lid); }
    let total = scan_workgroup_sum(lid, sum);
    if (lid == 0u) { block_sums[block] = total; }
    // The next block's sum reuses scan_totals.
    workgroupBarrier();
  }
}
`,
    // blockScanModule brings SCAN_BLOCK; its unused workgroup array costs nothing once compiled away.
    { modules: [gridModule, scanParamsModule, blockScanModule], constants: scanConstants(config) },
  );
}
