import { type Gpu, LimitExceededError } from '@gpuhash/core';
import { SLAB_BYTES, SLAB_WORDS, unitsPerBlock } from './geometry';
import { EMPTY_KEY } from './sentinels';

/** The SlabAlloc geometry: super blocks of memory blocks of 32·blockWords slabs each. */
export interface PoolGeometry {
  /** Bitmap words per memory block (1..32; the paper: 32, so 1024 slabs a block). */
  blockWords: number;
  blocksPerSuper: number;
  superBlocks: number;
  /** Slabs in use by the pool: all its blocks' slabs, or fewer in a pool smaller than one block. */
  units: number;
}

/** Slabs in a pool of this geometry. */
export function poolSlabs(g: PoolGeometry): number {
  return g.units;
}

/** Slabs the blocks of a geometry span. */
export function blockSlabs(g: Omit<PoolGeometry, 'units'>): number {
  return g.superBlocks * g.blocksPerSuper * unitsPerBlock(g.blockWords);
}

const pow2Floor = (n: number) => 2 ** Math.floor(Math.log2(Math.max(1, n)));
const pow2Ceil = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(1, n)));

/**
 * A pool geometry for at least `slabs` slabs. Large pools take the paper's blocks (1024 slabs, a
 * 32-word bitmap) in super blocks of 256 blocks (32 MiB); small pools take smaller blocks, so that
 * there are still dozens of blocks for groups to spread over, and a small table stays small.
 */
export function poolGeometryFor(slabs: number): PoolGeometry {
  const bigBlock = unitsPerBlock(32);
  if (slabs >= 256 * bigBlock) {
    const g = { blockWords: 32, blocksPerSuper: 256, superBlocks: Math.ceil(slabs / (256 * bigBlock)) };
    return { ...g, units: blockSlabs(g) };
  }
  const blockWords = Math.min(32, pow2Floor(slabs / (32 * 64)));
  const blocks = Math.ceil(Math.max(1, slabs) / unitsPerBlock(blockWords));
  const blocksPerSuper = Math.min(256, pow2Ceil(blocks));
  const g = { blockWords, blocksPerSuper, superBlocks: Math.ceil(blocks / blocksPerSuper) };
  // A pool under one block keeps exactly the slabs asked for (the allocator never claims past them).
  return { ...g, units: slabs < 32 ? Math.max(1, Math.ceil(slabs)) : blockSlabs(g) };
}

/**
 * The slab array and SlabAlloc's bitmaps. Base slabs (one per bucket) come first, then the pool,
 * in one buffer (the paper's SlabAlloc-light: one contiguous array, 32-bit slab indices). The pool
 * grows by super blocks: the new buffers receive a copy of the old ones, so every slab index (and
 * so every chain) survives, and the new slabs start all EMPTY with clear bitmap bits.
 */
export class SlabPool {
  slabs: GPUBuffer;
  bitmap: GPUBuffer;
  geometry: PoolGeometry;

  constructor(
    private readonly gpu: Gpu,
    readonly buckets: number,
    geometry: PoolGeometry,
  ) {
    this.geometry = geometry;
    this.check(geometry);
    this.slabs = gpu.createBuffer(
      this.totalSlabsOf(geometry) * SLAB_BYTES,
      `slab.slabs (${buckets} buckets + ${poolSlabs(geometry)} pool slabs)`,
    );
    this.bitmap = gpu.createBuffer(this.bitmapWordsOf(geometry) * 4, 'slab.bitmap');
  }

  get poolSlabs(): number {
    return poolSlabs(this.geometry);
  }

  /** Base and pool slabs. */
  get totalSlabs(): number {
    return this.totalSlabsOf(this.geometry);
  }

  /** Bytes of the slab array and bitmaps. */
  get bytes(): number {
    return this.totalSlabs * SLAB_BYTES + this.bitmapWordsOf(this.geometry) * 4;
  }

  /** Resets every slab to EMPTY and every bitmap bit to free. */
  encodeClear(encoder: GPUCommandEncoder): void {
    this.gpu.encodeFill(encoder, this.slabs, EMPTY_KEY, this.totalSlabs * SLAB_WORDS);
    encoder.clearBuffer(this.bitmap);
  }

  /** Whether a pool of `superBlocks` super blocks fits the device's buffer limits. */
  canHold(superBlocks: number): boolean {
    try {
      this.check({ ...this.geometry, superBlocks, units: blockSlabs({ ...this.geometry, superBlocks }) });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Grows the pool to `superBlocks` super blocks (copying the slabs and bitmaps over). Throws
   * LimitExceededError past the device's buffer limits (the pool is unchanged then).
   */
  grow(superBlocks: number): void {
    const next = { ...this.geometry, superBlocks, units: blockSlabs({ ...this.geometry, superBlocks }) };
    this.check(next);
    const slabs = this.gpu.createBuffer(
      this.totalSlabsOf(next) * SLAB_BYTES,
      `slab.slabs (${this.buckets} buckets + ${poolSlabs(next)} pool slabs)`,
    );
    const bitmap = this.gpu.createBuffer(this.bitmapWordsOf(next) * 4, 'slab.bitmap');
    const encoder = this.gpu.device.createCommandEncoder();
    const oldBytes = this.totalSlabs * SLAB_BYTES;
    encoder.copyBufferToBuffer(this.slabs, 0, slabs, 0, oldBytes);
    this.gpu.encodeFill(encoder, slabs, EMPTY_KEY, (this.totalSlabsOf(next) - this.totalSlabs) * SLAB_WORDS, oldBytes);
    encoder.copyBufferToBuffer(this.bitmap, 0, bitmap, 0, this.bitmapWordsOf(this.geometry) * 4);
    this.gpu.submit([encoder.finish()]);
    this.slabs.destroy();
    this.bitmap.destroy();
    this.slabs = slabs;
    this.bitmap = bitmap;
    this.geometry = next;
  }

  destroy(): void {
    this.slabs.destroy();
    this.bitmap.destroy();
  }

  private totalSlabsOf(g: PoolGeometry): number {
    return this.buckets + poolSlabs(g);
  }

  private bitmapWordsOf(g: PoolGeometry): number {
    return g.superBlocks * g.blocksPerSuper * g.blockWords;
  }

  private check(g: PoolGeometry): void {
    const total = this.totalSlabsOf(g);
    // Slab indices are u32 words below EMPTY_POINTER, and words index the array as u32 too.
    if (total * SLAB_WORDS >= 2 ** 32)
      throw new LimitExceededError('slab.slabs', 'slab index', total, 2 ** 32 / SLAB_WORDS, 'Use fewer buckets or keys.');
    this.gpu.checkBufferSize(total * SLAB_BYTES, `slab.slabs (${this.buckets} buckets + ${poolSlabs(g)} pool slabs)`);
  }
}
