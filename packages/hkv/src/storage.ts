import { type Gpu, LimitExceededError } from '@gpuhash/core';
import { BUCKET_SLOTS, DIGEST_WORDS, EMPTY_DIGEST, LOCK_WORDS, type ValueSplit, valueSplit } from './layout';

/**
 * The buffers of one table geometry:
 * - `meta`: per bucket 32 words of digests (one 128-byte line), then per bucket 4 words of claim
 *   bits, then 4 counter words (the first: live entries).
 * - `keys`: (lo, hi) per slot; `scores`: (lo, hi) per slot.
 * - `values`: `dim` floats per slot, `split.sliceSlots` slots per buffer, for the first
 *   `deviceSlots` slots (the host tier keeps the rest).
 */
export class HkvStorage {
  readonly meta: GPUBuffer;
  readonly keys: GPUBuffer;
  readonly scores: GPUBuffer;
  readonly values: readonly GPUBuffer[];
  readonly split: ValueSplit;
  readonly buckets: number;

  constructor(
    private readonly gpu: Gpu,
    readonly capacity: number,
    readonly dim: number,
    valueBufferBytes: number,
    maxSlices: number = Number.POSITIVE_INFINITY,
    /** Slots whose values live on the device (whole buckets); the others' values live in host memory. */
    readonly deviceSlots: number = capacity,
  ) {
    this.buckets = capacity / BUCKET_SLOTS;
    this.split = deviceSlots > 0 ? valueSplit(deviceSlots, dim, valueBufferBytes) : { sliceSlots: BUCKET_SLOTS, slices: 1 };
    if (this.split.slices > maxSlices) {
      throw new LimitExceededError(
        `HkvCache: ${capacity} slots of ${dim} floats`,
        'maxStorageBuffersPerShaderStage (value buffers of a kernel)',
        this.split.slices,
        maxSlices,
        'Use a smaller capacity or dim, or a device with larger bindings.',
      );
    }
    const created: GPUBuffer[] = [];
    try {
      const make = (bytes: number, label: string) => {
        const b = gpu.createBuffer(bytes, label);
        created.push(b);
        return b;
      };
      this.meta = make(this.counterWord * 4 + 16, 'hkv.meta');
      this.keys = make(capacity * 8, 'hkv.keys');
      this.scores = make(capacity * 8, 'hkv.scores');
      const values: GPUBuffer[] = [];
      for (let s = 0; s < this.split.slices; s++) {
        const slots = Math.min(this.split.sliceSlots, deviceSlots - s * this.split.sliceSlots);
        values.push(make(Math.max(slots, 1) * dim * 4, `hkv.values${s}`));
      }
      this.values = values;
    } catch (e) {
      for (const b of created) b.destroy();
      throw e;
    }
  }

  /** Word index of the live-entry counter in `meta`. */
  get counterWord(): number {
    return this.buckets * (DIGEST_WORDS + LOCK_WORDS);
  }

  get mask(): number {
    return this.buckets - 1;
  }

  /**
   * Clears every claim bit. Kernels that claim slots (insert, erase) keep the bits of the slots they
   * wrote until their dispatch ends (so a slot has one writer per dispatch): this runs after each.
   */
  encodeReleaseClaims(encoder: GPUCommandEncoder): void {
    encoder.clearBuffer(this.meta, this.buckets * DIGEST_WORDS * 4, this.buckets * LOCK_WORDS * 4);
  }

  /**
   * True from creation or a clear until the next insert-like batch is encoded: the cache holds no
   * key, so that batch's update pass need not look its keys up (see UpdateVariant.empty).
   */
  knownEmpty = true;

  /** Empties every slot: empty keys, the empty digest, zero scores, claim bits and counters. */
  encodeClear(encoder: GPUCommandEncoder): void {
    this.knownEmpty = true;
    const gpu = this.gpu;
    gpu.encodeFill(encoder, this.meta, EMPTY_DIGEST * 0x01010101, this.buckets * DIGEST_WORDS);
    encoder.clearBuffer(this.meta, this.buckets * DIGEST_WORDS * 4);
    gpu.encodeFill(encoder, this.keys, 0xffffffff, this.capacity * 2);
    encoder.clearBuffer(this.scores);
  }

  destroy(): void {
    this.meta.destroy();
    this.keys.destroy();
    this.scores.destroy();
    for (const v of this.values) v.destroy();
  }
}
