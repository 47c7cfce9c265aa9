/**
 * WebGPU's usage and map-mode bit values. Node's Dawn does not install `GPUBufferUsage` as a
 * global (and gpuhash pollutes no globals), so the spec's numbers live here.
 */
export const BufferUsage = {
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  INDEX: 0x0010,
  VERTEX: 0x0020,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
  QUERY_RESOLVE: 0x0200,
} as const;

/** `GPUMapMode` flags as plain numbers, usable in Node before a device exists. */
export const MapMode = { READ: 0x0001, WRITE: 0x0002 } as const;

/** Usage of a general-purpose storage buffer: read and written by kernels, copied in and out. */
export const STORAGE_USAGE = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
