/**
 * Recycles scratch buffers (staging, uniforms, temporaries) by usage and power-of-two size class.
 * A released buffer is held back until the next submit: commands already encoded may still
 * reference it, and queue order makes it safe to reuse only once those are submitted.
 */
const MIN_CLASS = 256;
const MAX_FREE_PER_CLASS = 4;

function sizeClass(bytes: number): number {
  let c = MIN_CLASS;
  while (c < bytes) c *= 2;
  return c;
}

/**
 * Reuses GPU buffers by usage and power-of-two size, so repeated batches do not allocate a buffer
 * per call. A released buffer becomes reusable after the next submit, so work already encoded
with it is never overwritten.
 */
export class BufferPool {
  private readonly free = new Map<string, GPUBuffer[]>();
  private pending: Array<{ key: string; buffer: GPUBuffer }> = [];
  private readonly owned = new WeakMap<GPUBuffer, string>();
  created = 0;
  reused = 0;

  constructor(private readonly device: GPUDevice) {}

  /** A buffer of at least `bytes` bytes (rounded up to a power of two) with exactly `usage`. */
  acquire(bytes: number, usage: number, label = 'gpuhash.pool'): GPUBuffer {
    const size = sizeClass(bytes);
    const key = `${usage}:${size}`;
    const list = this.free.get(key);
    const recycled = list?.pop();
    if (recycled) {
      this.reused++;
      return recycled;
    }
    const buffer = this.device.createBuffer({ size, usage, label });
    this.owned.set(buffer, key);
    this.created++;
    return buffer;
  }

  /** Gives a buffer back; it becomes reusable after the next submit. Foreign buffers are ignored. */
  release(buffer: GPUBuffer): void {
    const key = this.owned.get(buffer);
    if (key === undefined) return;
    this.pending.push({ key, buffer });
  }

  /** Called after every queue submission: pending buffers become reusable. */
  afterSubmit(): void {
    for (const { key, buffer } of this.pending) {
      if (buffer.mapState !== 'unmapped') {
        buffer.destroy();
        continue;
      }
      let list = this.free.get(key);
      if (!list) this.free.set(key, (list = []));
      if (list.length < MAX_FREE_PER_CLASS) list.push(buffer);
      else buffer.destroy();
    }
    this.pending = [];
  }

  get pooledBuffers(): number {
    let n = 0;
    for (const list of this.free.values()) n += list.length;
    return n;
  }

  /** Destroys every pooled buffer (device loss, Gpu.destroy). */
  clear(): void {
    for (const list of this.free.values()) for (const b of list) b.destroy();
    for (const { buffer } of this.pending) buffer.destroy();
    this.free.clear();
    this.pending = [];
  }
}
