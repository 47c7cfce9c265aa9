export type { OpCode } from '@gpuhash/core';
export { Op } from '@gpuhash/core';
export { BUSY_KEY, EMPTY_KEY, isReservedKey, RESERVED_KEYS, TOMBSTONE_KEY } from './sentinels';
export { LinearProbeTable } from './table';
export type {
  ApplyBatch,
  ApplyResult,
  DeviceFindResult,
  FindResult,
  HostKeys,
  InsertResult,
  KeysInput,
  KeyType,
  LinearProbeOptions,
  TableStats,
  U32Input,
} from './types';
