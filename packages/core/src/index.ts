export { requestGpu, fromDevice } from './request-gpu';
export type { RequestGpuOptions } from './request-gpu';
export { Gpu } from './gpu';
export type { SubgroupInfo } from './gpu';
export { DeviceArray, ELEMENT_BYTES, elementTypeOf, hostArrayType } from './device-array';
export type { ElementType, HostArrayOf } from './device-array';
export { BufferPool } from './buffer-pool';
export { PipelineCache } from './pipeline-cache';
export type { Binding, DispatchOptions, Kernel } from './kernel';
export { dispatchGrid } from './dispatch';
export type { Grid } from './dispatch';
export { GpuTimer } from './timing';
export type { PassTime, TimingResult } from './timing';
export { BufferUsage, MapMode, STORAGE_USAGE } from './usage';
export { isSoftwareInfo, subgroupSizes, describeInfo } from './adapter-info';
export { SWIFTSHADER_ICD_PATHS, findSwiftShaderIcd } from './adapter-node';
export {
  DestroyedError,
  DeviceLostError,
  GpuhashError,
  GpuOutOfMemoryError,
  GpuUnavailableError,
  GpuValidationError,
  InvalidArgumentError,
  LimitExceededError,
} from './errors';
export type { GpuhashErrorCode } from './errors';
export { compact, encodeCompact, encodeCompactWithScan, encodeExclusiveScan, exclusiveScan } from './scan';
export type { CompactTargets, CompactedArrays, ScanOptions } from './scan';
