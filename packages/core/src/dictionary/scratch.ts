import type { Gpu } from '../gpu';
import { STORAGE_USAGE } from '../usage';

/**
 * A table's named scratch buffers. A buffer outgrown by a later batch is retired, not destroyed:
 * passes already recorded into a caller's unsubmitted encoder may still use it. Retired buffers
 * are destroyed at the start of the table's next host operation (callers submit their encoders
 * before that), or with the arena.
 */
export class ScratchArena {
  private readonly buffers = new Map<string, GPUBuffer>();
  private retired: GPUBuffer[] = [];

  constructor(
    private readonly gpu: Gpu,
    private readonly label: string,
  ) {}

  /** The buffer named `name`, of at least `bytes` (a larger one replaces a smaller one). */
  get(name: string, bytes: number, usage: number = STORAGE_USAGE): GPUBuffer {
    const current = this.buffers.get(name);
    if (current && current.size >= bytes && current.usage === usage) return current;
    const buffer = this.gpu.createBuffer(bytes, `${this.label}.${name}`, usage);
    if (current) this.retired.push(current);
    this.buffers.set(name, buffer);
    return buffer;
  }

  /** Hands a buffer the table no longer uses to the arena, to be destroyed with the retired ones. */
  retire(buffer: GPUBuffer): void {
    this.retired.push(buffer);
  }

  /** Buffers waiting to be destroyed. */
  get retiredCount(): number {
    return this.retired.length;
  }

  /** Destroys the retired buffers. */
  flushRetired(): void {
    for (const b of this.retired) b.destroy();
    this.retired = [];
  }

  destroy(): void {
    this.flushRetired();
    for (const b of this.buffers.values()) b.destroy();
    this.buffers.clear();
  }
}
