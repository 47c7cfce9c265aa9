/**
 * Shard channels in Node: worker threads (`worker_threads`) and child processes (`child_process.fork`
 * with V8's serialization). Node only: the package's browser build puts transport-browser.ts in its
 * place (tsup.config.ts). Node's modules are imported when first needed, never at load.
 */
import type { Channel, Reply, Request, ServerChannel } from '../remote';

/** How a shard runs: a worker thread of this process, or a child process of its own. */
export type ShardKind = 'worker' | 'process';

/** The environment variable (child processes) and workerData key (threads) that mark a shard. */
const SHARD_MARK = 'GPUHASH_SHARD';

type WorkerThreads = typeof import('node:worker_threads');
type ChildProcess = typeof import('node:child_process');

const load = <T>(name: string): Promise<T> => import(/* @vite-ignore */ name as string) as Promise<T>;

/**
 * The channel to the sharded table when this thread or process was started as a shard
 * (`ShardWorkers.open`); undefined otherwise. A script that serves shards and also runs as the
 * main program checks this first.
 */
export async function shardServerChannel(): Promise<ServerChannel | undefined> {
  const threads = await load<WorkerThreads>('node:worker_threads');
  const data = threads.workerData as Record<string, unknown> | undefined;
  if (!threads.isMainThread && threads.parentPort && data && typeof data === 'object' && SHARD_MARK in data) {
    const port = threads.parentPort;
    return {
      post: (m, transfer) => port.postMessage(m, transfer),
      onMessage: (l) => port.on('message', l),
      exit: () => process.exit(0),
    };
  }
  if (process.env[SHARD_MARK] !== undefined && typeof process.send === 'function') {
    const send = process.send.bind(process);
    return {
      post: (m) => send(m),
      onMessage: (l) => process.on('message', (m) => l(m as Request)),
      exit: () => {
        process.disconnect?.();
        process.exit(0);
      },
    };
  }
  return undefined;
}

/** Starts one shard: `script` run as a worker thread or a child process, with `env` added to its environment. */
export async function spawnShard(kind: ShardKind, script: string | URL, index: number, env: Record<string, string>): Promise<Channel> {
  const exitListeners: Array<(e: Error) => void> = [];
  let exited = false;
  const exit = (reason: Error) => {
    if (exited) return;
    exited = true;
    for (const l of exitListeners) l(reason);
  };
  if (kind === 'worker') {
    const { Worker } = await load<WorkerThreads>('node:worker_threads');
    // A thread's process.env is a copy; the Vulkan loader reads the process's real environment,
    // which the caller sets around this shard's start (see ShardWorkers.open).
    const worker = new Worker(script, { workerData: { [SHARD_MARK]: index }, env: { ...process.env, ...env } });
    worker.on('error', (e) => exit(new Error(`shard worker ${index} crashed: ${e.message}`, { cause: e })));
    worker.on('exit', (code) => exit(new Error(`shard worker ${index} exited (code ${code})`)));
    return {
      post: (m, transfer) => worker.postMessage(m, transfer),
      onMessage: (l) => worker.on('message', (m: Reply) => l(m)),
      onExit: (l) => (exited ? l(new Error(`shard worker ${index} exited`)) : exitListeners.push(l)),
      terminate: async () => {
        await worker.terminate();
      },
    };
  }
  const { fork } = await load<ChildProcess>('node:child_process');
  const { fileURLToPath } = await load<typeof import('node:url')>('node:url');
  const path = typeof script === 'string' && !script.startsWith('file:') ? script : fileURLToPath(script);
  const child = fork(path, [], {
    serialization: 'advanced',
    env: { ...process.env, ...env, [SHARD_MARK]: String(index) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('error', (e) => exit(new Error(`shard process ${index} failed: ${e.message}`, { cause: e })));
  child.on('exit', (code, signal) => exit(new Error(`shard process ${index} exited (${signal ?? `code ${code}`})`)));
  return {
    // The IPC channel copies (V8's serializer); nothing is transferred.
    post: (m) => child.send(m),
    onMessage: (l) => child.on('message', (m) => l(m as Reply)),
    onExit: (l) => (exited ? l(new Error(`shard process ${index} exited`)) : exitListeners.push(l)),
    terminate: () =>
      new Promise<void>((resolve) => {
        if (exited || child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

export const transportAvailable = true;
