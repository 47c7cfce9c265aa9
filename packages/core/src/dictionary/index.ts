export { HOST_FIND_CHUNK_KEYS } from './chunked-find';
export type { DictionaryEngine, StagedApply, StagedBatch } from './engine';
export { allocateEngine } from './engine';
export type { FailureReport } from './failures';
export { decodeFailures, FailureFlag, FailureList, mergeFailures, NO_FAILURES } from './failures';
export type { KeySpec } from './keys';
export { checkFindOut, checkValues, distinctUnflagged, hostKeyCount, hostKeyWords, reservedIndices, u32KeySpec, u64KeySpec } from './keys';
export type { OpCode } from './ops';
export { describeValue, MAX_OP, Op, validateOps } from './ops';
export type { DictionaryDefaults, ResolvedDictionaryOptions } from './options';
export { integerIn, oneOf, positiveInteger, resolveDictionaryOptions } from './options';
export { ScratchArena } from './scratch';
export { DictionaryTable } from './table';
export type {
  ApplyBatch,
  ApplyResult,
  BulkInsertMode,
  DeviceApplyBatch,
  DeviceApplyResult,
  DeviceDictionary,
  DeviceFindResult,
  Dictionary,
  DictionaryCapability,
  DictionaryOptions,
  DictionaryStats,
  EncodeInsertOptions,
  FindOptions,
  FindResult,
  HostKeys,
  InsertResult,
  KeysInput,
  KeyType,
  OpsInput,
  RetrieveResult,
  SyncResult,
  ValuesInput,
} from './types';
export type { OrderDispatch, OrderedFindDispatch, OrderGatherBuffers, OrderPass, WindowOf } from './window-order';
export {
  batchGridLoop,
  chunkItem,
  encodeOrderedFind,
  encodeWindowOrder,
  ORDER_CHUNK_MIN,
  ORDER_WORKGROUPS,
  orderBinding,
  ordersByWindow,
  WINDOW_ORDER_FROM_BYTES,
  WINDOW_ORDER_MIN_BATCH,
  windowOrderKernels,
} from './window-order';
