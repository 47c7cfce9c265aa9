import type { Gpu } from '@gpuhash/core';

/** What a shard's table last said about itself (after each call). */
export interface ShardState {
  size?: number;
  capacity?: number;
}

/**
 * One shard as the sharded table drives it: a table object on a GPU of this thread (a local link)
 * or in a worker thread or process (a remote link), reached by method name with host arrays.
 */
export interface ShardLink {
  readonly index: number;
  /** Where it runs, for messages: 'gpu 1' or 'worker 1 (0000:3b:00.0)'. */
  readonly where: string;
  /** Local links: the shard's Gpu and table. */
  readonly gpu?: Gpu;
  readonly target?: object;
  /** Set once the shard is gone for good (its device lost, its worker dead). */
  readonly failure: unknown;
  readonly state: ShardState;
  call<R>(method: string, args: readonly unknown[]): Promise<R>;
  /** Whether an error from this shard means the shard is gone (then `failure` is set). */
  isFatal(error: unknown): boolean;
}

function isDeviceLost(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'DEVICE_LOST';
}

/** Numeric `size` and `capacity` of a table object, where they are plain properties. */
export function readState(target: object): ShardState {
  const t = target as { size?: unknown; capacity?: unknown };
  return {
    size: typeof t.size === 'number' ? t.size : undefined,
    capacity: typeof t.capacity === 'number' ? t.capacity : undefined,
  };
}

/** A shard whose table lives on a Gpu of this thread. */
export class LocalLink implements ShardLink {
  failure: unknown;
  state: ShardState;
  readonly where: string;

  constructor(
    readonly index: number,
    readonly gpu: Gpu,
    readonly target: object,
  ) {
    this.where = `gpu ${index} (${gpu.describe()})`;
    this.state = readState(target);
    gpu.onLost((e) => {
      this.failure ??= e;
    });
  }

  async call<R>(method: string, args: readonly unknown[]): Promise<R> {
    if (this.failure !== undefined) throw this.failure;
    const fn = (this.target as Record<string, unknown>)[method];
    if (typeof fn !== 'function') throw new TypeError(`the shard's table has no method ${method}`);
    try {
      const value = (await (fn as (...a: unknown[]) => unknown).apply(this.target, args as unknown[])) as R;
      this.state = readState(this.target);
      return value;
    } catch (error) {
      if (this.isFatal(error)) this.failure ??= error;
      throw error;
    }
  }

  isFatal(error: unknown): boolean {
    return this.gpu.isLost || isDeviceLost(error);
  }
}

export { isDeviceLost };
