import { wgslModule } from '../compose';

/**
 * Scans and sums across one workgroup's threads in workgroup memory: no subgroup operations, so it
 * runs on every device. Needs the constant SCAN_WG (a power of two). Every thread of the workgroup
 * must call these functions together (they contain barriers).
 */
export const workgroupScanModule = wgslModule(
  'kernels.scan.workgroup',
  /* wgsl */ `
// Two halves: the scan ping-pongs between them, so each step needs one barrier, not two.
var<workgroup> scan_totals: array<u32, 2u * SCAN_WG>;

// Exclusive prefix sum (mod 2^32) of value over threads 0..lid-1 (Hillis-Steele: log2(SCAN_WG) steps).
// Callers must pass a barrier before the next call of either function (both reuse scan_totals).
fn scan_workgroup_exclusive(lid: u32, value: u32) -> u32 {
  var half = 0u;
  var acc = value;
  scan_totals[lid] = acc;
  for (var offset = 1u; offset < SCAN_WG; offset <<= 1u) {
    workgroupBarrier();
    if (lid >= offset) { acc += scan_totals[half + lid - offset]; }
    half = SCAN_WG - half;
    scan_totals[half + lid] = acc;
  }
  return acc - value;
}

// Sum (mod 2^32) of value over all threads, returned to every thread.
fn scan_workgroup_sum(lid: u32, value: u32) -> u32 {
  scan_totals[lid] = value;
  for (var stride = SCAN_WG / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (lid < stride) { scan_totals[lid] += scan_totals[lid + stride]; }
  }
  workgroupBarrier();
  return scan_totals[0];
}
`,
);

/**
 * Exclusive scan of one block of SCAN_WG * SCAN_ITEMS elements in workgroup memory. Needs the
 * constants SCAN_WG and SCAN_ITEMS, and a function `scan_load(i: u32) -> u32` defined by the
 * kernel (element i of the input, 0 past the end). After `scan_block_exclusive(lid, base, offset)`
 * the prefix of element `base + k` is `scan_data[scan_slot(k)]`; the kernel reads it, then calls
 * `workgroupBarrier()` before the next block reuses scan_data.
 */
export const blockScanModule = wgslModule(
  'kernels.scan.block',
  /* wgsl */ `
const SCAN_BLOCK: u32 = SCAN_WG * SCAN_ITEMS;
// One padding word every 32 keeps the per-thread strided reads (stride SCAN_ITEMS) free of bank conflicts.
const SCAN_SHARED: u32 = SCAN_BLOCK + SCAN_BLOCK / 32u;
var<workgroup> scan_data: array<u32, SCAN_SHARED>;

fn scan_slot(k: u32) -> u32 { return k + (k >> 5u); }

fn scan_block_exclusive(lid: u32, base: u32, offset: u32) {
  // Coalesced loads: thread lid takes elements lid, lid + SCAN_WG, ...
  for (var j = 0u; j < SCAN_ITEMS; j++) {
    let k = j * SCAN_WG + lid;
    scan_data[scan_slot(k)] = scan_load(base + k);
  }
  workgroupBarrier();
  // Each thread then owns SCAN_ITEMS consecutive elements, kept in registers meanwhile.
  let first = lid * SCAN_ITEMS;
  var items: array<u32, SCAN_ITEMS>;
  var sum = 0u;
  for (var j = 0u; j < SCAN_ITEMS; j++) {
    items[j] = scan_data[scan_slot(first + j)];
    sum += items[j];
  }
  var running = scan_workgroup_exclusive(lid, sum) + offset;
  for (var j = 0u; j < SCAN_ITEMS; j++) {
    scan_data[scan_slot(first + j)] = running;
    running += items[j];
  }
  workgroupBarrier();
}
`,
  [workgroupScanModule],
);

/**
 * The uniform every scan pass reads, and `scan_load` over a binding named `scan_src`, which the
 * kernel declares along with `scan_params`.
 */
export const scanParamsModule = wgslModule(
  'kernels.scan.params',
  /* wgsl */ `
struct ScanParams {
  n: u32,
  blocks: u32,
  use_offsets: u32,
  count_nonzero: u32,
  count_index: u32,
  capacity: u32,
  _pad0: u32,
  _pad1: u32,
}

fn scan_load(i: u32) -> u32 {
  if (i >= scan_params.n) { return 0u; }
  let v = scan_src[i];
  if (scan_params.count_nonzero != 0u) { return select(0u, 1u, v != 0u); }
  return v;
}
`,
);
