// What a user needs from @gpuhash/core, so that installing this one package is enough: getting a
// GPU, device arrays, the errors, the op codes and the dictionary contract's types.
export type {
  ApplyBatch,
  ApplyResult,
  DeviceApplyBatch,
  DeviceApplyResult,
  DeviceDictionary,
  DeviceFindResult,
  Dictionary,
  DictionaryCapability,
  DictionaryOptions,
  DictionaryStats,
  ElementType,
  EncodeInsertOptions,
  FailureReport,
  FindResult,
  GpuhashErrorCode,
  HostArrayOf,
  HostKeys,
  InsertResult,
  KeysInput,
  KeyType,
  OpCode,
  OpsInput,
  RequestGpuOptions,
  RetrieveResult,
  SubgroupInfo,
  SyncResult,
  ValuesInput,
} from '@gpuhash/core';
export {
  CapacityError,
  DestroyedError,
  DeviceArray,
  DeviceLostError,
  fromDevice,
  Gpu,
  GpuhashError,
  GpuOutOfMemoryError,
  GpuUnavailableError,
  GpuValidationError,
  InternalError,
  InvalidArgumentError,
  InvalidOpError,
  LimitExceededError,
  Op,
  ReservedKeyError,
  requestGpu,
  ShardError,
  TableBusyError,
} from '@gpuhash/core';
export { SLAB_DEFAULTS, SlabTableBase } from './base';
export { bucketsFor, entriesPerSlab, expectedPoolSlabs, SLAB_BYTES, type SlabMode } from './geometry';
export { SlabHashMap } from './map';
export { SlabMultimap } from './multimap';
export { type PoolGeometry, poolGeometryFor } from './pool';
export { BUSY_KEY, EMPTY_KEY, EMPTY_POINTER, isReservedKey, RESERVED_KEYS, TOMBSTONE_KEY } from './sentinels';
export { SlabSet } from './set';
export type { FindAllResult, SlabOptions, SlabStats } from './types';
