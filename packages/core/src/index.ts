export { describeInfo, isSoftwareInfo, subgroupSizes } from './adapter-info';
export type { HostGpu } from './adapter-node';
export { findDeviceSelectLayer, findSwiftShaderIcd, gpuSelectionEnv, listHostGpus, setProcessEnv } from './adapter-node';
export type {
  BindingRecord,
  BindingSpec,
  BindingsLayout,
  StorageAccess,
  StorageBindingSpec,
  StorageNames,
  UniformBindingSpec,
  UniformNames,
} from './binding-layout';
export { storage, uniform } from './binding-layout';
export { BufferPool } from './buffer-pool';
export type { DefinedKernel, EncodeOptions, KernelFamily, KernelSpec } from './define-kernel';
export { defineKernel } from './define-kernel';
export type { ElementType, HostArrayOf } from './device-array';
export { DeviceArray, ELEMENT_BYTES, elementTypeOf, hostArrayType } from './device-array';
export * from './dictionary';
export type { Grid } from './dispatch';
export { dispatchGrid } from './dispatch';
export type { GpuhashErrorCode } from './errors';
export {
  CapacityError,
  DestroyedError,
  DeviceLostError,
  GpuhashError,
  GpuOutOfMemoryError,
  GpuUnavailableError,
  GpuValidationError,
  InternalError,
  InvalidArgumentError,
  InvalidOpError,
  LimitExceededError,
  ReservedKeyError,
  ShardError,
  TableBusyError,
} from './errors';
export type { GpuInit, SubgroupInfo } from './gpu';
export { Gpu, STAGED_CHUNK_BYTES, STAGED_MIN_BYTES } from './gpu';
export type { Binding, DispatchOptions, Kernel } from './kernel';
export { wordRange } from './kernel';
export { PipelineCache } from './pipeline-cache';
export type { RequestGpuOptions } from './request-gpu';
export { DEFAULT_DAWN_OPTIONS, fromDevice, requestGpu } from './request-gpu';
export type { GpuPlan, RequestGpusOptions } from './request-gpus';
export { requestGpus } from './request-gpus';
export type { CompactedArrays, CompactTargets, ScanOptions } from './scan';
export { compact, encodeCompact, encodeCompactWithScan, encodeExclusiveScan, exclusiveScan } from './scan';
export { SWIFTSHADER_ICD_PATHS } from './software-driver';
export type { PassTime, TimingResult } from './timing';
export { encodeTimedSpan, GpuTimer, timestampEnds } from './timing';
export { u64FromWords, u64Words } from './u64-words';
export type { ParamField, ParamSlot, ParamsLayout, ParamType, ParamValues, UniformLayout } from './uniform-params';
export { BufferUsage, MapMode, STORAGE_USAGE } from './usage';
export type { Variant, VariantValue } from './variant-key';
export { variantKey } from './variant-key';
