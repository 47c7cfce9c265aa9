import { findDeviceSelectLayer, gpuSelectionEnv, InvalidArgumentError, listHostGpus, setProcessEnv } from '@gpuhash/core';
import { type ShardKind, shardServerChannel, spawnShard } from './node/transport';
import { runShardServer, ShardEndpoint, type ShardGpuOptions, type ShardServerOptions, transferables } from './remote';

/** Where a shard landed. */
export interface ShardPlacement {
  shard: number;
  /** The GPU's PCI address where the shard was tied to one (the device-select layer); undefined otherwise. */
  pciBusId: string | undefined;
  /** The shard's `gpu.describe()`. */
  device: string;
  isSoftware: boolean;
}

/** Options of `ShardWorkers.open`. */
export interface ShardWorkersOptions {
  /**
   * The module each shard runs: one that calls `serveShard({ factories })` when `isShardWorker()`
   * (the same file as the main program can do both; a bundle passes `new URL(import.meta.url)`).
   */
  script: string | URL;
  /** 'worker' (default): worker threads of this process; 'process': child processes. */
  kind?: ShardKind;
  /**
   * How many shards. Default: one per GPU of the host (one when the GPUs cannot be told apart:
   * no device-select layer). More shards than GPUs share them round-robin (and a host without a
   * GPU runs them all on the software driver: tests).
   */
  count?: number;
  /** `requestGpu` options for each shard (those that cross a thread boundary). */
  gpu?: ShardGpuOptions;
  /** Where notices go (a host with several GPUs but no device-select layer). Default: console.warn. */
  log?: (message: string) => void;
}

/**
 * Shards in worker threads or child processes, one Dawn instance and device each, each tied to
 * its own GPU through Mesa's device-select layer where the host has several (see `requestGpus`).
 * Tables are made on them with `ShardedTable.create(workers, { factory, options })`, by a factory
 * the shard script registered.
 *
 * @example
 * ```ts
 * // shards.ts: the main program and the shards' script in one file
 * import { LinearProbeTable } from '@gpuhash/linear-probe';
 * import { isShardWorker, serveShard, ShardedTable, ShardWorkers } from '@gpuhash/sharded';
 *
 * const factories = { 'linear-probe': (gpu, options) => LinearProbeTable.create(gpu, options) };
 * if (await isShardWorker()) await serveShard({ factories });
 * else {
 *   const workers = await ShardWorkers.open({ script: new URL(import.meta.url) });
 *   const table = await ShardedTable.create(workers, { factory: 'linear-probe', options: { capacity: 1 << 24 } });
 *   // ...
 *   table.destroy();
 *   await workers.close();
 * }
 * ```
 */
export class ShardWorkers {
  readonly kind: ShardKind;
  readonly placements: readonly ShardPlacement[];
  /** @internal */
  readonly endpoints: readonly ShardEndpoint[];
  #closed = false;

  private constructor(kind: ShardKind, endpoints: ShardEndpoint[], placements: ShardPlacement[]) {
    this.kind = kind;
    this.endpoints = endpoints;
    this.placements = placements;
  }

  get count(): number {
    return this.endpoints.length;
  }

  static async open(options: ShardWorkersOptions): Promise<ShardWorkers> {
    const kind = options.kind ?? 'worker';
    if (kind !== 'worker' && kind !== 'process')
      throw new InvalidArgumentError(`ShardWorkers.open: kind must be 'worker' or 'process', got ${String(kind)}`);
    const log = options.log ?? ((m: string) => console.warn(m));
    const hostGpus = await listHostGpus();
    const layer = hostGpus.length > 1 ? await findDeviceSelectLayer() : undefined;
    if (hostGpus.length > 1 && !layer) {
      log(
        `gpuhash: this host has ${hostGpus.length} GPUs, but Mesa's Vulkan device-select layer is not installed as an implicit layer (Debian/Ubuntu: apt-get install mesa-vulkan-drivers); every shard opens the same GPU.`,
      );
    }
    const tie = layer !== undefined;
    const count = options.count ?? (tie ? hostGpus.length : 1);
    if (!(Number.isInteger(count) && count >= 1 && count <= 256))
      throw new InvalidArgumentError(`ShardWorkers.open: count must be an integer from 1 to 256, got ${String(count)}`);
    const endpoints: ShardEndpoint[] = [];
    const placements: ShardPlacement[] = [];
    try {
      // One at a time: the device-select layer reads the process's environment when each shard's
      // Vulkan instance is created (a thread's process.env is a copy the loader never sees).
      for (let shard = 0; shard < count; shard++) {
        const host = tie ? hostGpus[shard % hostGpus.length] : undefined;
        const env = host ? gpuSelectionEnv(host) : {};
        const restore = kind === 'worker' ? setProcessEnv(env) : () => {};
        try {
          const channel = await spawnShard(kind, options.script, shard, env);
          const endpoint = new ShardEndpoint(shard, `${kind} ${shard}${host ? ` (${host.pciBusId})` : ''}`, channel);
          endpoints.push(endpoint);
          const reply = await endpoint.request({ t: 'open', shard, gpu: options.gpu ?? {} });
          const info = reply.value as { device: string; isSoftware: boolean };
          placements.push({ shard, pciBusId: host?.pciBusId, device: info.device, isSoftware: info.isSoftware });
        } finally {
          restore();
        }
      }
    } catch (error) {
      await Promise.all(endpoints.map((e) => e.channel.terminate()));
      throw error;
    }
    return new ShardWorkers(kind, endpoints, placements);
  }

  /** Sends `data` to a shard and back (moved both ways between threads, copied between processes): the transport alone. */
  async echo<T extends Uint32Array | Float32Array | Uint8Array>(shard: number, data: T): Promise<T> {
    const reply = await this.endpoint(shard).request({ t: 'echo', data }, this.kind === 'worker' ? transferables(data) : []);
    return reply.value as T;
  }

  /** Runs a procedure the shard script registered (`serveShard({ procedures })`) next to the shard's tables. */
  async run<R = unknown>(shard: number, procedure: string, ...args: unknown[]): Promise<R> {
    const transfer = this.kind === 'worker' ? args.flatMap((a) => transferables(a)) : [];
    return (await this.endpoint(shard).request({ t: 'proc', name: procedure, args }, transfer)).value as R;
  }

  /** Ends one shard at once (its tables are lost; operations that touch it fail with ShardError). */
  async terminate(shard: number): Promise<void> {
    await this.endpoint(shard).channel.terminate();
  }

  /** Destroys every shard's tables and device and ends the threads or processes. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(
      this.endpoints.map(async (e) => {
        if (e.failure) return;
        const exited = new Promise<void>((resolve) => e.channel.onExit(() => resolve()));
        try {
          await e.request({ t: 'close' });
          await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
        } catch {}
        await e.channel.terminate();
      }),
    );
  }

  private endpoint(shard: number): ShardEndpoint {
    const e = this.endpoints[shard];
    if (!e) throw new InvalidArgumentError(`ShardWorkers: no shard ${shard} (there are ${this.endpoints.length})`);
    return e;
  }
}

/** Whether this thread or process was started as a shard by `ShardWorkers.open` (Node; false in browsers). */
export async function isShardWorker(): Promise<boolean> {
  return (await shardServerChannel()) !== undefined;
}

/**
 * Serves shard requests in a thread or process started by `ShardWorkers.open`: opens the shard's
 * GPU when asked, makes tables with `factories`, runs their methods and `procedures`. Resolves at
 * once; the thread or process lives until the sharded side closes it. Throws when this is not a shard.
 */
export async function serveShard(options: ShardServerOptions): Promise<void> {
  const channel = await shardServerChannel();
  if (!channel) throw new InvalidArgumentError('serveShard: this thread or process was not started by ShardWorkers.open');
  runShardServer(channel, options);
}
