export type {
  ApplyBatch,
  ApplyResult,
  DeviceApplyBatch,
  DeviceApplyResult,
  DeviceFindResult,
  Dictionary,
  FindResult,
  InsertResult,
  KeysInput,
  OpCode,
  RetrieveResult,
  ValuesInput,
  ValuesInput as U32Input,
} from '@gpuhash/core';
export { Op } from '@gpuhash/core';
export { EMPTY_KEY, isReservedKey, RESERVED_KEYS, TOMBSTONE_KEY } from './sentinels';
export type { SplitPointer } from './split-pointer';
export {
  addressOf,
  awayBits,
  BUCKET_SLOTS,
  bucketCount,
  candidateBuckets,
  farBit,
  HOME_SLOTS,
  HOMES,
  homeOf,
  keyWord,
  splitPointerFor,
  stashLineOf,
  stashLinesFor,
  valueWord,
} from './split-pointer';
export { maxBuckets } from './storage';
export { HiveTable } from './table';
export type { HiveOptions, HiveStats } from './types';
