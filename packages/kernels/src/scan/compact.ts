import { composeWgsl } from '../compose';
import { gridModule } from '../grid';

/** Which outputs a compaction writes. At least one must be set. */
export interface CompactOutputs {
  /** Scatter `values[i]` of kept elements to `out_values`. */
  readonly values: boolean;
  /** Scatter the index `i` of kept elements to `out_indices`. */
  readonly indices: boolean;
}

/**
 * Uniform of the scatter kernel (4 words): n, count_index, capacity, 0.
 */
export const COMPACT_PARAMS_WORDS = 4;

/**
 * WGSL of stream compaction from a precomputed scan: element i is kept when `flags[i] != 0`, and
 * goes to position `scan[i]`, where `scan` is the exclusive scan of the 0/1 flags (`flags[i] != 0`,
 * not the raw flag values). Thread 0 writes the number kept, `scan[n-1] + keep[n-1]` (0 for n = 0),
 * to `count[count_index]`; kept elements at positions >= `capacity` are dropped.
 * Bindings: 0 params (uniform: n, count_index, capacity, 0), 1 `flags` (read), 2 `scan` (read),
 * 3 `count` (read_write), then if `values`: `values` (read), `out_values` (read_write); then if
 * `indices`: `out_indices` (read_write). One thread per element, grid-strided.
 */
export function compactWithScanWgsl(workgroupSize: number, outputs: CompactOutputs): string {
  if (!Number.isInteger(workgroupSize) || workgroupSize < 1 || workgroupSize > 1024) {
    throw new RangeError(`compact: workgroupSize must be an integer in [1, 1024], got ${workgroupSize}`);
  }
  if (!outputs.values && !outputs.indices) throw new RangeError('compact: a compaction must write values, indices or both');
  const decls = [
    'var<storage, read> flags: array<u32>',
    'var<storage, read> scan: array<u32>',
    'var<storage, read_write> count: array<u32>',
    ...(outputs.values ? ['var<storage, read> values: array<u32>', 'var<storage, read_write> out_values: array<u32>'] : []),
    ...(outputs.indices ? ['var<storage, read_write> out_indices: array<u32>'] : []),
  ]
    .map((d, i) => `@group(0) @binding(${i + 1}) ${d};`)
    .join('\n');
  const writes = [outputs.values ? 'out_values[o] = values[i];' : '', outputs.indices ? 'out_indices[o] = i;' : ''].join(' ');
  return composeWgsl(
    /* wgsl */ `
struct CompactParams { n: u32, count_index: u32, capacity: u32, _pad: u32 }
@group(0) @binding(0) var<uniform> params: CompactParams;
${decls}

@compute @workgroup_size(COMPACT_WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let gid = grid_thread(wid, nwg, lid, COMPACT_WG);
  if (gid == 0u) {
    var kept = 0u;
    if (params.n > 0u) {
      let last = params.n - 1u;
      kept = scan[last] + select(0u, 1u, flags[last] != 0u);
    }
    count[params.count_index] = kept;
  }
  for (var i = gid; i < params.n; i += grid_threads(nwg, COMPACT_WG)) {
    if (flags[i] != 0u) {
      let o = scan[i];
      if (o < params.capacity) { ${writes} }
    }
  }
}
`,
    { modules: [gridModule], constants: { COMPACT_WG: workgroupSize } },
  );
}
