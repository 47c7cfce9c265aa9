export { LinearProbeTable } from './table';
export { Op } from './ops';
export type { OpCode } from './ops';
export { BUSY_KEY, EMPTY_KEY, RESERVED_KEYS, TOMBSTONE_KEY, isReservedKey } from './sentinels';
export type {
  ApplyBatch,
  ApplyResult,
  DeviceFindResult,
  FindResult,
  HostKeys,
  InsertResult,
  KeyType,
  KeysInput,
  LinearProbeOptions,
  TableStats,
  U32Input,
} from './types';
