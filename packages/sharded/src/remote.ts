/**
 * The message protocol between a sharded table and its shards in worker threads or child
 * processes: requests by id, answered once each; host arrays travel as typed arrays (moved, not
 * copied, between threads). Platform-neutral: node/transport.ts supplies the channels.
 */
import { type Gpu, GpuhashError, type GpuhashErrorCode, type RequestGpuOptions, requestGpu } from '@gpuhash/core';
import { isDeviceLost, readState, type ShardLink, type ShardState } from './link';

/** Options of the shard's `requestGpu` that can cross a thread or process boundary. */
export type ShardGpuOptions = Pick<RequestGpuOptions, 'allowSoftware' | 'powerPreference' | 'dawnOptions' | 'requiredFeatures' | 'label'>;

export type Request =
  | { t: 'open'; id: number; shard: number; gpu: ShardGpuOptions }
  | { t: 'create'; id: number; factory: string; options: unknown }
  | { t: 'call'; id: number; target: number; method: string; args: unknown[] }
  | { t: 'proc'; id: number; name: string; args: unknown[] }
  | { t: 'echo'; id: number; data: unknown }
  | { t: 'close'; id: number };

/** A request before the endpoint numbers it. */
export type RequestBody = Request extends infer R ? (R extends Request ? Omit<R, 'id'> : never) : never;

export type Reply =
  | { id: number; ok: true; value: unknown; state?: ShardState }
  | { id: number; ok: false; error: SerializedError; fatal: boolean };

interface SerializedError {
  name: string;
  message: string;
  code?: string;
  props: Record<string, unknown>;
}

/** A message channel to one shard (a worker's port, a child process's IPC). */
export interface Channel {
  post(message: Request, transfer: ArrayBuffer[]): void;
  onMessage(listener: (message: Reply) => void): void;
  /** Called once when the other side is gone (it exited, crashed, or was terminated). */
  onExit(listener: (reason: Error) => void): void;
  terminate(): Promise<void>;
}

/** The shard side of a channel. */
export interface ServerChannel {
  post(message: Reply, transfer: ArrayBuffer[]): void;
  onMessage(listener: (message: Request) => void): void;
  /** Ends this thread or process once the reply to `close` is out. */
  exit(): void;
}

/** The ArrayBuffers under a value's typed arrays (the value, its properties, array elements): what a reply moves. */
export function transferables(value: unknown): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (v: unknown) => {
    if (ArrayBuffer.isView(v) && v.buffer instanceof ArrayBuffer && v.byteLength === v.buffer.byteLength) out.add(v.buffer);
  };
  if (ArrayBuffer.isView(value)) add(value);
  else if (Array.isArray(value)) value.forEach(add);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) add(v);
  return [...out];
}

function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), props: {} };
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(error)) {
    if (k === 'code' || k === 'cause') continue;
    if (typeof v === 'function') continue;
    props[k] = v;
  }
  return { name: error.name, message: error.message, code: (error as { code?: string }).code, props };
}

/** A shard's error, rebuilt on the table's side: a GpuhashError with the shard's code, name and fields. */
export function deserializeError(e: SerializedError, where: string): Error {
  const error = e.code ? new GpuhashError(e.code as GpuhashErrorCode, e.message) : new Error(`${where}: ${e.message}`);
  error.name = e.name;
  Object.assign(error, e.props);
  return error;
}

let nextId = 1;

/** The table's side of one worker or process: requests and their replies, and its death. */
export class ShardEndpoint {
  failure: Error | undefined;
  readonly #pending = new Map<number, { resolve: (r: Reply & { ok: true }) => void; reject: (e: unknown) => void }>();

  constructor(
    readonly index: number,
    readonly where: string,
    readonly channel: Channel,
  ) {
    channel.onMessage((reply) => {
      const p = this.#pending.get(reply.id);
      if (!p) return;
      this.#pending.delete(reply.id);
      if (reply.ok) p.resolve(reply);
      else {
        const error = deserializeError(reply.error, where);
        if (reply.fatal) this.failure ??= error;
        p.reject(error);
      }
    });
    channel.onExit((reason) => {
      this.failure ??= reason;
      for (const p of this.#pending.values()) p.reject(reason);
      this.#pending.clear();
    });
  }

  /** Sends a request; `transfer` moves those buffers (worker threads) instead of copying them. */
  request(message: RequestBody, transfer: ArrayBuffer[] = []): Promise<Reply & { ok: true }> {
    if (this.failure) return Promise.reject(this.failure);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      try {
        this.channel.post({ ...message, id } as Request, transfer);
      } catch (error) {
        this.#pending.delete(id);
        reject(error);
      }
    });
  }
}

/** A shard whose table lives in a worker thread or child process. */
export class RemoteLink implements ShardLink {
  state: ShardState;
  readonly where: string;

  constructor(
    readonly index: number,
    readonly endpoint: ShardEndpoint,
    readonly targetId: number,
    state: ShardState,
  ) {
    this.where = endpoint.where;
    this.state = state;
  }

  get failure(): unknown {
    return this.endpoint.failure;
  }

  async call<R>(method: string, args: readonly unknown[]): Promise<R> {
    // The arrays a sharded table passes are its own per-shard copies: moved, never copied.
    const transfer = args.flatMap((a) => transferables(a));
    const reply = await this.endpoint.request({ t: 'call', target: this.targetId, method, args: [...args] }, transfer);
    if (reply.state) this.state = reply.state;
    return reply.value as R;
  }

  isFatal(error: unknown): boolean {
    return this.endpoint.failure !== undefined || isDeviceLost(error);
  }
}

/** Makes a table (or cache) on the shard's Gpu: `options` as the main thread passed them, `shard` its index. */
export type ShardFactory = (gpu: Gpu, options: unknown, shard: number) => Promise<object>;

/** What a procedure sees: the shard's Gpu and the tables made on it, by id. */
export interface ShardContext {
  readonly shard: number;
  readonly gpu: Gpu;
  readonly targets: ReadonlyMap<number, object>;
}

/** Code that runs next to a shard's table (timing its kernels, checks): `ShardWorkers.run(shard, name, ...args)`. */
export type ShardProcedure = (context: ShardContext, ...args: never[]) => Promise<unknown>;

/** What a shard worker serves: its table factories by name, and procedures. */
export interface ShardServerOptions {
  factories: Readonly<Record<string, ShardFactory>>;
  procedures?: Readonly<Record<string, ShardProcedure>>;
}

/** The shard side: answers requests on `channel` until `close`. */
export function runShardServer(channel: ServerChannel, options: ShardServerOptions): void {
  let gpu: Gpu | undefined;
  let shard = -1;
  const targets = new Map<number, object>();
  let nextTarget = 1;
  const handle = async (m: Request): Promise<{ value: unknown; state?: ShardState }> => {
    switch (m.t) {
      case 'open':
        shard = m.shard;
        gpu = await requestGpu({ ...m.gpu, log: () => {} });
        return { value: { device: gpu.describe(), isSoftware: gpu.isSoftware } };
      case 'create': {
        const factory = options.factories[m.factory];
        if (!factory)
          throw new Error(`no table factory named '${m.factory}' (this shard serves: ${Object.keys(options.factories).join(', ')})`);
        if (!gpu) throw new Error('the shard has no GPU yet');
        const target = await factory(gpu, m.options, shard);
        const id = nextTarget++;
        targets.set(id, target);
        const t = target as { keyType?: unknown; capabilities?: Iterable<string>; dim?: unknown };
        return {
          value: { target: id, keyType: t.keyType, capabilities: t.capabilities ? [...t.capabilities] : [], dim: t.dim },
          state: readState(target),
        };
      }
      case 'call': {
        const target = targets.get(m.target);
        if (!target) throw new Error(`no table ${m.target} on this shard (destroyed?)`);
        const member = (target as Record<string, unknown>)[m.method];
        const value = typeof member === 'function' ? await (member as (...a: unknown[]) => unknown).apply(target, m.args) : member;
        if (m.method === 'destroy') targets.delete(m.target);
        return { value, state: readState(target) };
      }
      case 'proc': {
        const proc = options.procedures?.[m.name];
        if (!proc) throw new Error(`no procedure named '${m.name}' on this shard`);
        if (!gpu) throw new Error('the shard has no GPU yet');
        return { value: await (proc as (c: ShardContext, ...a: unknown[]) => Promise<unknown>)({ shard, gpu, targets }, ...m.args) };
      }
      case 'echo':
        return { value: m.data };
      case 'close':
        for (const t of targets.values()) (t as { destroy?: () => void }).destroy?.();
        targets.clear();
        gpu?.destroy();
        return { value: undefined };
    }
  };
  channel.onMessage((m) => {
    handle(m).then(
      ({ value, state }) => {
        channel.post({ id: m.id, ok: true, value, state }, transferables(value));
        if (m.t === 'close') channel.exit();
      },
      (error: unknown) => {
        const fatal = gpu?.isLost === true || isDeviceLost(error);
        channel.post({ id: m.id, ok: false, error: serializeError(error), fatal }, []);
      },
    );
  });
}
