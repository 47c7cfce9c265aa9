import { type Gpu, Op } from '@gpuhash/core';
import { hitStream, valuesFor } from './keys';
import type { TableChoice } from './tables';
import { type RunResult, type RunSpec, runWorkload, type StepResult } from './workloads';

let shared: Promise<Gpu> | undefined;

/** One device for the whole page: every playground on it shares the compiled pipelines. */
export function sharedGpu(): Promise<Gpu> {
  shared ??= import('@gpuhash/core')
    .then(({ requestGpu }) => requestGpu())
    .then(
      (gpu) => {
        gpu.onLost(() => {
          shared = undefined;
        });
        return gpu;
      },
      (error: unknown) => {
        shared = undefined;
        throw error;
      },
    );
  return shared;
}

const warmed = new WeakMap<Gpu, Set<string>>();

/** Whether this table's pipelines are already compiled on this device (a run of it has warmed up). */
export function isWarm(gpu: Gpu, tableId: string): boolean {
  return warmed.get(gpu)?.has(tableId) ?? false;
}

/** Runs every operation once on a small table so that shader compilation is not timed. */
async function warmUp(gpu: Gpu, choice: TableChoice): Promise<void> {
  const done = warmed.get(gpu) ?? new Set<string>();
  warmed.set(gpu, done);
  if (done.has(choice.id) || !choice.create) return;
  const table = await choice.create(gpu, 1024);
  const keys = hitStream().take(64);
  await table.insert(keys, valuesFor(keys));
  await table.find(keys);
  await table.apply?.(new Uint8Array(64).fill(Op.find), keys, valuesFor(keys));
  await table.erase(keys);
  await table.insert(keys, valuesFor(keys)); // inserts that reuse tombstones compile another variant
  table.destroy();
  done.add(choice.id);
}

export interface BrowserRun {
  device: string;
  software: boolean;
  /** True when this run compiled the table's shaders first (its first run on this device; not timed). */
  compiled: boolean;
  result: RunResult;
}

/** What a run is doing: getting the device, compiling the table's pipelines, or running the workload. */
export type RunPhase = 'device' | 'compiling' | 'running';

export interface BrowserRunOptions {
  onStep?: (s: StepResult) => void;
  onPhase?: (phase: RunPhase) => void;
  /** Cancels the run between two GPU calls; the run rejects with an AbortError. */
  signal?: AbortSignal;
}

/** Runs a workload on the visitor's GPU: a fresh table per run, destroyed afterwards. */
export async function runInBrowser(choice: TableChoice, spec: RunSpec, options: BrowserRunOptions = {}): Promise<BrowserRun> {
  if (!choice.create) throw new Error(`${choice.name} is not released yet`);
  const { signal, onPhase } = options;
  onPhase?.('device');
  const gpu = await sharedGpu();
  signal?.throwIfAborted();
  const compiled = !isWarm(gpu, choice.id);
  if (compiled) onPhase?.('compiling');
  await warmUp(gpu, choice);
  signal?.throwIfAborted();
  onPhase?.('running');
  const table = await choice.create(gpu, spec.capacity);
  try {
    const result = await runWorkload(table, spec, { now: () => performance.now(), onStep: options.onStep, signal });
    return { device: gpu.describe(), software: gpu.isSoftware, compiled, result };
  } finally {
    table.destroy();
  }
}
