import type { Gpu } from '@gpuhash/core';
import { encodeGenerate, type StreamSpec, type Verdict } from '../gpu/streams';
import type { EncodeRep } from '../gpu/time-reps';
import { timeReps } from '../gpu/time-reps';
import type { ResultRow } from '../results';
import { gops, type Stats, summarize } from '../stats';
import type { BenchTable, Capability, TableEntry } from '../tables/types';
import { encodeInsertFirst } from './chunks';

/**
 * GPU buffers shared by a table's workloads, sized for the largest key count of the run:
 * hit keys and values (stream index j at position j), miss keys, find outputs. Each stream is a
 * list of buffers of `chunk` elements (the last holds the rest), each within one storage binding
 * (chunks.ts); below 2^28 keys a stream is one buffer.
 */
export interface KeyBuffers {
  /** Elements each stream holds. */
  length: number;
  /** Elements per buffer of a stream. */
  chunk: number;
  hitKeys: GPUBuffer[];
  hitValues: GPUBuffer[];
  missKeys: GPUBuffer[];
  outValues: GPUBuffer[];
  outFound: GPUBuffer[];
  /** Scratch for generated queries (Zipf finds), of one chunk. */
  scratch: GPUBuffer;
}

/** Everything a workload needs: the device, the table, the run's settings and its key streams. */
export interface WorkloadContext {
  gpu: Gpu;
  entry: TableEntry;
  table: BenchTable;
  capacity: number;
  reps: number;
  warmup: number;
  /** Minimum warm-up time per measurement (see RepOptions.warmupMs). */
  warmupMs: number;
  /** Load factors of the run (those the table supports). */
  loads: readonly number[];
  /** Batch size of the incremental workload, log2. */
  batchLog2: number;
  /** Zipf exponent of find-hit queries; null = every inserted key once. */
  zipf: number | null;
  keys: KeyBuffers;
  /** Random 4-byte gathers per second on this device (the roofline for shares). */
  gatherPerSecond: number;
  /** Host copies of the hit keys, their values and the miss keys (downloaded once, on first use). */
  hostKeys(): Promise<{ keys: Uint32Array; values: Uint32Array; misses: Uint32Array }>;
}

/** An end-to-end measurement: wall-clock stats and what its check found wrong. */
export interface EndToEnd {
  stats: Stats;
  problems: string[];
  /** Bytes of inputs sent to the GPU and of answers read back. */
  bytes: { up: number; down: number };
}

/** A workload: shared by every table that has the capabilities it requires. */
export interface Workload {
  /** Name used by `--workload`, in results and charts. */
  readonly name: string;
  /** Group name `--workload` also accepts (e.g. 'mixed' for every mixed workload). */
  readonly group?: string;
  readonly description: string;
  readonly requires: readonly Capability[];
  /** Runs once per load factor (true) or once per table (false). */
  readonly perLoad: boolean;
  /** Runs only when `--workload` names it (a study rather than part of every suite). */
  readonly optIn?: boolean;
  run(ctx: WorkloadContext, load: number): Promise<ResultRow[]>;
  /**
   * The same operation through the table's host API, wall clock (capability 'host'). The runner
   * calls these after every GPU measurement of the table: their long host phases would leave the
   * GPU idle and clocked down for the GPU timings that followed.
   */
  endToEnd?(ctx: WorkloadContext, load: number): Promise<EndToEnd>;
}

/** Keys in a table of the context's capacity at a load factor. */
export function keyCount(ctx: WorkloadContext, load: number): number {
  return Math.round(load * ctx.capacity);
}

/** timeReps with the run's warm-up and repetition counts. */
export function timeWorkload(ctx: WorkloadContext, label: string, encodeRep: EncodeRep): Promise<Map<string, number[]>> {
  return timeReps(ctx.gpu, encodeRep, { warmup: ctx.warmup, warmupMs: ctx.warmupMs, reps: ctx.reps, label });
}

/** Empties the table and inserts the first n hit keys, untimed; checks the size. */
export async function buildTable(ctx: WorkloadContext, n: number): Promise<void> {
  const encoder = ctx.gpu.device.createCommandEncoder({ label: 'bench.build (untimed)' });
  ctx.table.encodeReset(encoder);
  encodeInsertFirst(ctx.table, encoder, ctx.keys, n);
  ctx.gpu.submit([encoder.finish()]);
  const size = await ctx.table.size();
  if (size !== n) throw new Error(`building the table: size ${size} after inserting ${n} unique keys`);
}

/** Writes a stream's keys into a buffer with one GPU pass. */
export async function generate(ctx: WorkloadContext, spec: StreamSpec, keys: GPUBuffer): Promise<void> {
  const encoder = ctx.gpu.device.createCommandEncoder({ label: 'bench.generate' });
  encodeGenerate(ctx.gpu, encoder, spec, keys);
  ctx.gpu.submit([encoder.finish()]);
  await ctx.gpu.finish();
}

/** A problem description for a failed verdict, or none. */
export function verdictProblems(what: string, n: number, v: Verdict): string[] {
  return v.wrong === 0 ? [] : [`${v.wrong} of ${n} ${what} answers wrong (first at index ${v.firstWrong})`];
}

/** A size check as a problem list. */
export function sizeProblems(size: number, expected: number): string[] {
  return size === expected ? [] : [`table size ${size}, expected ${expected}`];
}

export interface RowInput {
  workload: string;
  load: number;
  loadTo?: number;
  operation: string;
  ops: number;
  samples: number[];
  problems: string[];
  note?: string;
}

/** A result row: GPU-time summary, throughput, share of the gather roofline, verdict. */
export function makeRow(ctx: WorkloadContext, input: RowInput): ResultRow {
  const gpuMs = summarize(input.samples);
  const rate = gops(input.ops, gpuMs.median);
  const notes = [...input.problems, ...(input.note ? [input.note] : [])];
  return {
    table: ctx.entry.name,
    workload: input.workload,
    load: input.load,
    ...(input.loadTo !== undefined ? { loadTo: input.loadTo } : {}),
    operation: input.operation,
    ops: input.ops,
    gpuMs,
    gops: rate,
    shareOfGather: rate !== null && ctx.gatherPerSecond > 0 ? (rate * 1e9) / ctx.gatherPerSecond : null,
    ok: input.problems.length === 0,
    ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
  };
}

/** Times `body` after `warmup` untimed runs; `before` runs untimed ahead of each. */
export async function timeHost(ctx: WorkloadContext, body: () => Promise<void>, before?: () => Promise<void>): Promise<Stats> {
  const samples: number[] = [];
  for (let r = 0; r < ctx.warmup + ctx.reps; r++) {
    if (before) await before();
    await ctx.gpu.finish();
    const t0 = performance.now();
    await body();
    const ms = performance.now() - t0;
    if (r >= ctx.warmup) samples.push(ms);
  }
  return summarize(samples);
}
