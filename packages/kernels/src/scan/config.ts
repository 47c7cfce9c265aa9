import type { ConstantValue } from '../compose';

/**
 * The shape of one scan block: `workgroupSize` threads each own `itemsPerThread` consecutive
 * elements, so a block covers `workgroupSize * itemsPerThread` elements. Both are pipeline
 * constants (SCAN_WG, SCAN_ITEMS): tests use tiny blocks to reach several recursion levels.
 */
export interface ScanConfig {
  /** Threads per workgroup: a power of two (the tree reduction halves it). */
  readonly workgroupSize: number;
  /** Consecutive elements per thread. */
  readonly itemsPerThread: number;
}

/**
 * 128 threads x 8 items = 1024-element blocks: two levels cover 1M elements, three cover 1G.
 * Fastest of the shapes measured on an H200 (2^27 elements: 0.88 ms, 150 G elements/s), and
 * quick to compile on SwiftShader (256 x 8 takes seconds there).
 */
export const DEFAULT_SCAN_CONFIG: ScanConfig = { workgroupSize: 128, itemsPerThread: 8 };

/** Elements per block. */
export function scanBlockSize(config: ScanConfig): number {
  return config.workgroupSize * config.itemsPerThread;
}

/** Workgroup memory a scan kernel of this shape declares, in bytes (block, its padding, two halves of thread totals). */
export function scanWorkgroupBytes(config: ScanConfig): number {
  const block = scanBlockSize(config);
  return (block + Math.floor(block / 32) + 2 * config.workgroupSize) * 4;
}

/** Throws a RangeError unless the config is usable: a power-of-two workgroup and blocks of at least 2 elements. */
export function validateScanConfig(config: ScanConfig): void {
  const { workgroupSize: wg, itemsPerThread: items } = config;
  if (!Number.isInteger(wg) || wg < 1 || (wg & (wg - 1)) !== 0 || wg > 1024) {
    throw new RangeError(`scan: workgroupSize must be a power of two in [1, 1024], got ${wg}`);
  }
  if (!Number.isInteger(items) || items < 1 || items > 64) {
    throw new RangeError(`scan: itemsPerThread must be an integer in [1, 64], got ${items}`);
  }
  // A one-element block would never shrink the problem, so recursion would not end.
  if (wg * items < 2) throw new RangeError('scan: a block must hold at least 2 elements');
}

/** The composeWgsl constants of a config. */
export function scanConstants(config: ScanConfig): Record<string, ConstantValue> {
  return { SCAN_WG: config.workgroupSize, SCAN_ITEMS: config.itemsPerThread };
}

/** A stable key for a config, for pipeline cache keys. */
export function scanConfigKey(config: ScanConfig): string {
  return `wg${config.workgroupSize}.items${config.itemsPerThread}`;
}

/**
 * Element counts of each level of a reduce-then-scan: `[n, ceil(n / block), ...]`, ending with
 * the first count that fits one block (that level is scanned by a single workgroup). `[]` for n = 0.
 */
export function scanLevelSizes(n: number, blockSize: number): number[] {
  if (n <= 0) return [];
  const sizes = [n];
  while (n > blockSize) {
    n = Math.ceil(n / blockSize);
    sizes.push(n);
  }
  return sizes;
}

/**
 * Layout of the uniform `ScanParams` every scan pass reads (8 words):
 * n, blocks, use_offsets, count_nonzero, count_index, capacity, 0, 0.
 */
export const SCAN_PARAMS_WORDS = 8;

/** The params of one scan level, as the scan kernels read them (`SCAN_PARAMS_WORDS` u32 words). */
export interface ScanParams {
  /** Elements at this level. */
  n: number;
  /** Blocks to process: ceil(n / block). Zero is allowed (compaction of nothing writes count 0). */
  blocks: number;
  /** Add `offsets[block]` (the scanned block sums of this level). */
  useOffsets?: boolean;
  /** Scan `x != 0 ? 1 : 0` instead of `x` (flags). */
  countNonzero?: boolean;
  /** Compaction: the word of `count` that receives the number kept. */
  countIndex?: number;
  /** Compaction: elements each output holds; kept elements beyond it are dropped (count still says how many). */
  capacity?: number;
}

/** Packs ScanParams into the uniform layout. */
export function packScanParams(p: ScanParams): Uint32Array {
  return new Uint32Array([p.n, p.blocks, p.useOffsets ? 1 : 0, p.countNonzero ? 1 : 0, p.countIndex ?? 0, p.capacity ?? 0, 0, 0]);
}
