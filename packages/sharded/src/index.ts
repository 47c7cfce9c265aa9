// Sharded gpuhash tables over the GPUs of one host. What a user needs from @gpuhash/core comes
// along: requestGpus (one Gpu per GPU), requestGpu, Gpu, DeviceArray, Op and the errors.
export type {
  ApplyBatch,
  ApplyResult,
  DeviceFindResult,
  Dictionary,
  FindResult,
  GpuPlan,
  HostGpu,
  InsertResult,
  KeyType,
  RequestGpuOptions,
  RequestGpusOptions,
} from '@gpuhash/core';
export {
  DestroyedError,
  DeviceArray,
  DeviceLostError,
  Gpu,
  GpuhashError,
  InvalidArgumentError,
  listHostGpus,
  Op,
  ReservedKeyError,
  requestGpu,
  requestGpus,
  ShardError,
} from '@gpuhash/core';
export type {
  CacheShard,
  ShardedCacheFindResult,
  ShardedEvictResult,
  ShardedFindOrInsertResult,
  ShardedUpsertResult,
} from './cache';
export { ShardedCache } from './cache';
export type { LocalFactory, RemoteFactory, ShardHosts } from './group';
export { MAX_SHARDS, SHARD_SEED, shardHash, shardOf, shardOfModule } from './hash';
export type { ShardKind } from './node/transport';
export { HostPartition } from './partition';
export type { ShardContext, ShardFactory, ShardGpuOptions, ShardProcedure, ShardServerOptions } from './remote';
export type { DeviceBatchOptions, DeviceBatchTiming, ShardedOptions, ShardedStats } from './table';
export { ShardedTable } from './table';
export type { ShardPlacement, ShardWorkersOptions } from './workers';
export { isShardWorker, ShardWorkers, serveShard } from './workers';
