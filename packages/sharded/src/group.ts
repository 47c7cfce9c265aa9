import { DestroyedError, type Gpu, InvalidArgumentError, ShardError } from '@gpuhash/core';
import { LocalLink, type ShardLink } from './link';
import type { HostPartition } from './partition';
import { RemoteLink } from './remote';
import type { ShardWorkers } from './workers';

/** Makes one shard's table on a Gpu of this thread. */
export type LocalFactory<T> = (gpu: Gpu, shard: number) => Promise<T>;

/** Names a table factory that the shard script registered (`serveShard({ factories })`), with its options. */
export interface RemoteFactory {
  factory: string;
  /** Passed to the factory as given (structured-cloned: plain data). */
  options?: unknown;
}

/** Where the shards run: Gpus of this thread, or shard workers. */
export type ShardHosts = readonly Gpu[] | ShardWorkers;

/** What each shard's table said about itself when it was made. */
export interface ShardInfo {
  keyType: unknown;
  capabilities: ReadonlySet<string>;
  /** A cache's value width (HKV), where the table has one. */
  dim: unknown;
}

/**
 * The shards of one sharded table or cache: their links, the operation chain (host operations
 * run in call order, each on every shard it touches at once), and failure accounting.
 */
export class ShardGroup {
  readonly links: readonly ShardLink[];
  readonly info: readonly ShardInfo[];
  #chain: Promise<unknown> = Promise.resolve();
  #destroyed = false;

  private constructor(
    readonly owner: string,
    links: ShardLink[],
    info: ShardInfo[],
  ) {
    this.links = links;
    this.info = info;
  }

  static async open<T extends object>(owner: string, hosts: ShardHosts, factory: LocalFactory<T> | RemoteFactory): Promise<ShardGroup> {
    const where = `${owner}.create`;
    const local = Array.isArray(hosts);
    if (local) {
      if (hosts.length === 0 || hosts.length > 256) throw new InvalidArgumentError(`${where}: give 1 to 256 Gpus, got ${hosts.length}`);
      if (typeof factory !== 'function')
        throw new InvalidArgumentError(`${where}: shards on Gpus take a factory function, (gpu, shard) => Table.create(gpu, options)`);
    } else if (typeof factory !== 'object' || factory === null || typeof (factory as RemoteFactory).factory !== 'string') {
      throw new InvalidArgumentError(
        `${where}: shards on workers take { factory: 'name', options }, naming a factory the shard script serves`,
      );
    }
    const count = local ? (hosts as readonly Gpu[]).length : (hosts as ShardWorkers).count;
    const settled = await Promise.allSettled(
      Array.from({ length: count }, async (_, s): Promise<{ link: ShardLink; info: ShardInfo }> => {
        if (local) {
          const gpu = (hosts as readonly Gpu[])[s] as Gpu;
          const target = await (factory as LocalFactory<T>)(gpu, s);
          const t = target as { keyType?: unknown; capabilities?: Iterable<string>; dim?: unknown };
          return {
            link: new LocalLink(s, gpu, target),
            info: { keyType: t.keyType, capabilities: new Set(t.capabilities ?? []), dim: t.dim },
          };
        }
        const endpoint = (hosts as ShardWorkers).endpoints[s];
        if (!endpoint) throw new InvalidArgumentError(`${where}: no shard worker ${s}`);
        const f = factory as RemoteFactory;
        const reply = await endpoint.request({ t: 'create', factory: f.factory, options: f.options });
        const v = reply.value as { target: number; keyType: unknown; capabilities: string[]; dim: unknown };
        return {
          link: new RemoteLink(s, endpoint, v.target, reply.state ?? {}),
          info: { keyType: v.keyType, capabilities: new Set(v.capabilities), dim: v.dim },
        };
      }),
    );
    const failed = settled.flatMap((r, s) => (r.status === 'rejected' ? [{ s, error: r.reason as unknown }] : []));
    if (failed.length > 0) {
      for (const r of settled) if (r.status === 'fulfilled') void r.value.link.call('destroy', []).catch(() => {});
      const first = failed[0] as { s: number; error: unknown };
      if (failed.length === count && !(first.error instanceof Error && 'shard' in first.error)) throw first.error;
      throw new ShardError(
        where,
        failed.map((f) => f.s),
        new Uint32Array(0),
        first.error,
        { dead: true },
      );
    }
    const ok = settled as PromiseFulfilledResult<{ link: ShardLink; info: ShardInfo }>[];
    return new ShardGroup(
      owner,
      ok.map((r) => r.value.link),
      ok.map((r) => r.value.info),
    );
  }

  get count(): number {
    return this.links.length;
  }

  get isDestroyed(): boolean {
    return this.#destroyed;
  }

  /** Shards known to be gone (device lost, worker dead), ascending. */
  get dead(): number[] {
    return this.links.filter((l) => l.failure !== undefined).map((l) => l.index);
  }

  /** Runs a host operation after the ones called before it. */
  run<T>(op: string, body: () => Promise<T>): Promise<T> {
    if (this.#destroyed) return Promise.reject(new DestroyedError(`this ${this.owner}`));
    const next = this.#chain.then(
      () => this.checked(body),
      () => this.checked(body),
    );
    this.#chain = next.catch(() => {});
    void op;
    return next;
  }

  private async checked<T>(body: () => Promise<T>): Promise<T> {
    if (this.#destroyed) throw new DestroyedError(`this ${this.owner}`);
    return body();
  }

  /**
   * Calls every shard the partition touches (every shard without one) at once and merges their
   * answers; when any fails, throws ShardError naming them, with the batch indices routed to them
   * and what the others did (`merge` over the answers that came, the failed ones undefined).
   */
  async fan<R, P>(
    op: string,
    part: HostPartition | undefined,
    call: (link: ShardLink, s: number) => Promise<R>,
    merge: (answers: readonly (R | undefined)[]) => P,
    shards: readonly number[] = part ? part.touched : this.links.map((l) => l.index),
  ): Promise<P> {
    const answers: (R | undefined)[] = new Array(this.links.length).fill(undefined);
    const failures: Array<{ s: number; error: unknown }> = [];
    await Promise.all(
      shards.map(async (s) => {
        try {
          answers[s] = await call(this.links[s] as ShardLink, s);
        } catch (error) {
          failures.push({ s, error });
        }
      }),
    );
    if (failures.length === 0) return merge(answers);
    failures.sort((a, b) => a.s - b.s);
    let partial: P | undefined;
    try {
      partial = merge(answers);
    } catch {}
    const failedShards = failures.map((f) => f.s);
    throw new ShardError(
      `${this.owner}.${op}`,
      failedShards,
      part ? part.indicesOfAny(failedShards) : new Uint32Array(0),
      (failures[0] as { error: unknown }).error,
      { partial, dead: failures.some((f) => (this.links[f.s] as ShardLink).isFatal(f.error)) },
    );
  }

  /** Destroys every shard's table (once the operations already called have settled); the Gpus or workers stay. */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    void this.#chain.then(() => {
      for (const link of this.links) if (link.failure === undefined) void link.call('destroy', []).catch(() => {});
    });
  }
}
