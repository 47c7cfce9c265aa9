// What a user needs from @gpuhash/core, so that installing this one package is enough: getting a
// GPU, device arrays and the errors.
export type { ElementType, GpuhashErrorCode, HostArrayOf, RequestGpuOptions, SubgroupInfo } from '@gpuhash/core';
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
  ReservedKeyError,
  requestGpu,
  ShardError,
  TableBusyError,
} from '@gpuhash/core';
export type { FindOrInsertResult } from './cache';
export { HkvCache, SLOTS_PER_BUCKET } from './cache';
export type { PassTimer } from './engine';
export {
  BUCKET_SLOTS,
  bucket2Of,
  bucketOf,
  digestOf,
  EMPTY_DIGEST,
  hashByteOf,
  isReservedKey,
  keyHash,
  RESERVED_KEYS,
  roundCapacity,
  startWordOf,
  type ValueSplit,
  valueSplit,
} from './layout';
export type {
  DeviceUpsertBatch,
  EntryPredicate,
  EvictResult,
  ExportResult,
  FindResult,
  HkvOptions,
  HkvStats,
  HkvStatusCode,
  KeysInput,
  ScorePolicy,
  ScoresInput,
  UpsertResult,
  ValuesInput,
} from './types';
export { HkvStatus } from './types';
