export type {
  ApplyBatch,
  ApplyResult,
  DeviceApplyBatch,
  DeviceApplyResult,
  DeviceFindResult,
  Dictionary,
  FindResult,
  HostKeys,
  InsertResult,
  KeysInput,
  KeyType,
  OpCode,
  RetrieveResult,
  ValuesInput,
  ValuesInput as U32Input,
} from '@gpuhash/core';
export { Op } from '@gpuhash/core';
export { BUSY_KEY, EMPTY_KEY, isReservedKey, RESERVED_KEYS, TOMBSTONE_KEY } from './sentinels';
export { LinearProbeTable } from './table';
export type { LinearProbeInsertOptions, LinearProbeOptions, LinearProbeStats, TableStats } from './types';
