import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Gpu, requestGpu } from '@gpuhash/core';
import { callerDirectory, type Known, type Options, parseArgs, resolvePaths, UsageError, usage } from './args';
import { describeDevice } from './device';
import { gitInfo } from './git';
import { runHkvBench } from './hkv/suite';
import { measureHostLink } from './host-link';
import { Progress } from './progress';
import { compareReports, formatComparison } from './report/compare';
import { formatMarkdown } from './report/markdown';
import { reportCharts } from './report/svg';
import { formatTerminal } from './report/terminal';
import { type BenchReport, type ResultRow, SCHEMA_VERSION, type SkippedRow, validateReport } from './results';
import { measureRoofline } from './roofline';
import { countSteps, type RunPlan, runTable } from './runner';
import { runShardedBench } from './sharded/suite';
import { TABLES } from './tables';
import type { TableEntry } from './tables/types';
import { selectWorkloads, WORKLOADS, workloadNames } from './workloads';

/**
 * Dawn rounds timestamps to 2^16 ns by default (a browser's defence against timing attacks):
 * a 0.3 ms pass would read as 0.262 or 0.328. A benchmark wants every nanosecond.
 */
const DAWN_OPTIONS = ['disable-dawn-features=timestamp_quantization'];

/**
 * Minimum warm-up per measurement on a GPU: long enough for its clock to come back from idle. On
 * an H200 the SM clock sat at 660-1215 MHz after host phases (pipeline compiles, end-to-end runs)
 * and took up to 0.5 s of work to reach 1980 MHz; with 100 ms, Hive's first build row after
 * linear-probe's end-to-end runs read 10.2 ms where it takes 6.8 (nvidia-smi trace, 2026-11-22).
 */
const DEFAULT_WARMUP_MS = 500;

/** The CLI's surroundings, replaceable for tests. */
export interface MainIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Draw a progress bar (a terminal) or print one line per step. */
  stderrIsTTY: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  /** A device to run on; main then leaves it alive (tests share one). Default: requestGpu(). */
  gpu?: Gpu;
  /** The tables to choose from. Default: the registry. */
  tables?: readonly TableEntry[];
}

function defaultIo(): MainIo {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    stderrIsTTY: process.stderr.isTTY === true,
    env: process.env,
    cwd: process.cwd(),
  };
}

function readOld(path: string): BenchReport {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`--compare: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const problems = validateReport(parsed);
  if (problems.length > 0)
    throw new UsageError(`--compare: ${path} is not a gpuhash-bench results file: ${problems.slice(0, 3).join('; ')}`);
  return parsed as BenchReport;
}

function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/**
 * Runs the CLI: parses arguments, measures, prints and writes the results. Returns the exit
 * status: 0 all correct, 1 a wrong answer or a failure, 2 bad arguments.
 */
export async function main(argv: readonly string[], overrides: Partial<MainIo> = {}): Promise<number> {
  const io = { ...defaultIo(), ...overrides };
  // HKV is a cache, not a Dictionary: its workloads are a suite of their own.
  if (argv[0] === 'hkv') return runHkvBench(argv.slice(1), io, io.gpu ? [] : DAWN_OPTIONS);
  // One table sharded over the host's GPUs: its own suite, on every GPU (@gpuhash/sharded).
  if (argv[0] === 'sharded') return runShardedBench(argv.slice(1), io, DAWN_OPTIONS);
  const tables = io.tables ?? TABLES;
  const known: Known = { tables: tables.map((t) => t.name), workloads: workloadNames(WORKLOADS) };
  let options: Options;
  let old: BenchReport | undefined;
  try {
    options = resolvePaths(parseArgs(argv, known), callerDirectory(io.env, io.cwd));
    if (options.compare && !options.help) old = readOld(options.compare);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`gpuhash-bench: ${error.message}\n\n${usage(known)}\n`);
    return 2;
  }
  if (options.help) {
    io.stdout(`${usage(known)}\n`);
    return 0;
  }

  const started = performance.now();
  let gpu: Gpu;
  try {
    gpu =
      io.gpu ?? (await requestGpu({ allowSoftware: !options.requireHardware, dawnOptions: DAWN_OPTIONS, log: (m) => io.stderr(`${m}\n`) }));
  } catch (error) {
    io.stderr(`gpuhash-bench: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  try {
    if (!gpu.hasTimestamps) {
      io.stderr(`gpuhash-bench: ${gpu.describe()} has no timestamp-query feature; GPU times cannot be measured.\n`);
      return 1;
    }
    const report = await run(gpu, options, tables, io, started, io.gpu ? [] : DAWN_OPTIONS);
    io.stdout(`${formatTerminal(report)}\n`);
    if (old && options.compare) io.stdout(`\n${formatComparison(compareReports(old, report), options.compare)}\n`);
    const written: string[] = [];
    if (options.json) {
      writeFile(options.json, `${JSON.stringify(report, null, 2)}\n`);
      written.push(options.json);
    }
    if (options.markdown) {
      writeFile(options.markdown, formatMarkdown(report));
      written.push(options.markdown);
    }
    if (options.svg) {
      for (const [name, svg] of await reportCharts(report)) {
        writeFile(join(options.svg, name), svg);
        written.push(join(options.svg, name));
      }
    }
    if (written.length > 0) io.stdout(`wrote ${written.join(', ')}\n`);
    return report.ok ? 0 : 1;
  } catch (error) {
    io.stderr(`gpuhash-bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  } finally {
    if (!io.gpu) gpu.destroy();
  }
}

async function run(
  gpu: Gpu,
  options: Options,
  tables: readonly TableEntry[],
  io: MainIo,
  started: number,
  dawnOptions: string[],
): Promise<BenchReport> {
  const plan: RunPlan = {
    tables: options.tables === null ? tables.filter((t) => !t.optIn) : tables.filter((t) => options.tables?.includes(t.name)),
    workloads: selectWorkloads(options.workloads, WORKLOADS),
    loads: options.loads,
    capacity: 2 ** options.capacityLog2,
    reps: options.reps,
    warmup: options.warmup,
    warmupMs: options.warmupMs ?? (gpu.isSoftware ? 0 : DEFAULT_WARMUP_MS),
    batchLog2: options.batchLog2,
    ...(options.keyChunkLog2 !== null ? { keyChunk: 2 ** options.keyChunkLog2 } : {}),
    zipf: options.zipf,
    e2e: options.e2e,
  };
  const git = gitInfo(options.gitRevision, io.env, io.cwd);
  if (!options.quiet) io.stderr(`gpuhash-bench ${options.suite}: ${gpu.describe()}\n`);
  const progress = new Progress(countSteps(plan) + 1, options.quiet ? null : { write: io.stderr, isTTY: io.stderrIsTTY });
  progress.step('rooflines');
  const roofline = await measureRoofline(gpu, { reps: plan.reps, warmup: plan.warmup, warmupMs: plan.warmupMs });
  if (plan.e2e) roofline.hostLink = await measureHostLink(gpu, { reps: plan.reps, warmup: 1 });
  const results: ResultRow[] = [];
  const skipped: SkippedRow[] = [];
  for (const entry of plan.tables) {
    const r = await runTable(gpu, entry, plan, roofline.gather4.opsPerSecond, progress, roofline.hostLink);
    results.push(...r.results);
    skipped.push(...r.skipped);
  }
  progress.finish();
  // What the suite's defaults leave out: listed with the skips, so a quick run says what it did not do.
  for (const l of options.leftOut.loads)
    skipped.push({ table: '*', workload: '*', load: l, note: `not in the ${options.suite} suite (--loads sets the loads)` });
  const report: BenchReport = {
    schemaVersion: SCHEMA_VERSION,
    date: new Date().toISOString(),
    git,
    runtime: { node: process.version, platform: process.platform, arch: process.arch },
    device: describeDevice(gpu, dawnOptions),
    suite: options.suite,
    capacity: plan.capacity,
    reps: plan.reps,
    warmup: plan.warmup,
    warmupMs: plan.warmupMs,
    loads: [...plan.loads],
    keys: options.zipf === null ? { distribution: 'uniform' } : { distribution: 'zipf', zipfExponent: options.zipf },
    roofline,
    results,
    skipped,
    ok: results.every((r) => r.ok),
    seconds: (performance.now() - started) / 1000,
  };
  return report;
}
