/**
 * The browser build's stand-in for transport.ts (tsup.config.ts swaps it in): a browser has one
 * GPU and no worker processes that can open another, so shards live on `Gpu`s of the page.
 */
import { GpuUnavailableError } from '@gpuhash/core';
import type * as NodeTransport from './transport';

export type { ShardKind } from './transport';

export const shardServerChannel: typeof NodeTransport.shardServerChannel = async () => undefined;

export const spawnShard: typeof NodeTransport.spawnShard = async () => {
  throw new GpuUnavailableError(
    "ShardWorkers need Node (worker_threads, child_process); this is @gpuhash/sharded's browser build. In a browser, pass Gpus to ShardedTable.create.",
  );
};

export const transportAvailable = false;
