import { DestroyedError, InvalidArgumentError } from './errors';

/** Element types a device array can hold; each element is 4 bytes. */
export type ElementType = 'u32' | 'i32' | 'f32';

/** The typed array that holds a device array's elements on the host: `Uint32Array` for `u32`, and so on. */
export type HostArrayOf<T extends ElementType> = T extends 'u32' ? Uint32Array : T extends 'i32' ? Int32Array : Float32Array;

/** Bytes per element of every device array type. */
export const ELEMENT_BYTES = 4;

/** The typed array constructor for an element type. */
export function hostArrayType(type: ElementType): Uint32ArrayConstructor | Int32ArrayConstructor | Float32ArrayConstructor {
  return type === 'u32' ? Uint32Array : type === 'i32' ? Int32Array : Float32Array;
}

/** The element type of a typed array (`Uint32Array` is `u32`, `Int32Array` is `i32`, `Float32Array` is `f32`). */
export function elementTypeOf(data: Uint32Array | Int32Array | Float32Array): ElementType {
  if (data instanceof Uint32Array) return 'u32';
  if (data instanceof Int32Array) return 'i32';
  return 'f32';
}

/**
 * A typed array that lives on the GPU: a buffer, a length in elements and an element type.
 * Tables take and return these so that a pipeline of operations never round-trips through the
 * host. `owned` arrays destroy their buffer on `destroy()`; wrapped caller buffers are left alone.
 */
export class DeviceArray<T extends ElementType = ElementType> {
  private destroyed = false;

  constructor(
    private readonly gpuBuffer: GPUBuffer,
    readonly length: number,
    readonly type: T,
    readonly owned: boolean,
  ) {}

  /** Wraps a caller's buffer (not owned: `destroy()` leaves it alive). */
  static wrap<T extends ElementType>(buffer: GPUBuffer, length: number, type: T): DeviceArray<T> {
    if (!Number.isInteger(length) || length < 0)
      throw new InvalidArgumentError(`DeviceArray.wrap: length must be a non-negative integer, got ${length}`);
    if (length * ELEMENT_BYTES > buffer.size) {
      throw new InvalidArgumentError(
        `DeviceArray.wrap: ${length} ${type} elements need ${length * ELEMENT_BYTES} bytes but the buffer has ${buffer.size}`,
      );
    }
    return new DeviceArray(buffer, length, type, false);
  }

  get buffer(): GPUBuffer {
    if (this.destroyed) throw new DestroyedError('this DeviceArray');
    return this.gpuBuffer;
  }

  get byteLength(): number {
    return this.length * ELEMENT_BYTES;
  }

  get isDestroyed(): boolean {
    return this.destroyed;
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.owned) this.gpuBuffer.destroy();
  }
}
