import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type Gpu, requestGpu, requestGpus } from '@gpuhash/core';
import { UsageError } from '../args';
import { describeDevice } from '../device';
import { formatShardedRows, measureSharded, SHARD_TABLES, type ShardedRow, scalingRows } from './measure';

/**
 * `gpuhash-bench sharded`: one table sharded over 1 and N GPUs of this host (@gpuhash/sharded,
 * shards on Gpus of this process), measured the same way for both: find GPU time per shard,
 * end to end from host arrays, a device-resident batch. See measure.ts.
 */

export interface ShardedBenchOptions {
  suite: 'quick' | 'full';
  /** GPUs of the N-GPU run; null: every GPU of the host (2 devices on a software adapter). */
  gpus: number | null;
  table: string;
  slotsLog2: number;
  load: number;
  reps: number;
  deviceBatchLog2: number;
  e2e: boolean;
  json?: string;
  markdown?: string;
  requireHardware: boolean;
  quiet: boolean;
}

const SUITES = {
  quick: { slotsLog2: 14, reps: 3, deviceBatchLog2: 12 },
  full: { slotsLog2: 27, reps: 5, deviceBatchLog2: 24 },
};

export function shardedUsage(): string {
  return `usage: gpuhash-bench sharded [quick|full] [options]

One table sharded over 1 and N GPUs of this host (@gpuhash/sharded): find GPU time per shard (summed,
and at once), end to end from host arrays, a device-resident batch on GPU 0 and its cross-GPU copies.

  quick                  2^${SUITES.quick.slotsLog2} slots per GPU (the default; on SwiftShader, N devices of one adapter)
  full                   2^${SUITES.full.slotsLog2} slots per GPU
  --gpus N               GPUs of the sharded run (default: every GPU of the host; 2 on a software adapter)
  --table NAME           the shards' table (default linear-probe): ${SHARD_TABLES.join(', ')}
  --capacity-log2 N      slots per GPU = 2^N
  --load L               load factor of every shard (default 0.9)
  --reps N               timed repetitions, median reported
  --device-batch-log2 N  keys of the device-resident batch = 2^N
  --no-e2e               skip end-to-end timings
  --json FILE            write the rows as JSON
  --markdown FILE        write the markdown table
  --require-hardware     fail instead of falling back to SwiftShader
  --quiet                no progress output`;
}

export function parseShardedArgs(argv: readonly string[]): ShardedBenchOptions & { help: boolean } {
  let suite: 'quick' | 'full' = 'quick';
  const o: Partial<ShardedBenchOptions> & { help: boolean } = { help: false };
  const int = (flag: string, v: string | undefined, min: number, max: number) => {
    const n = Number(v);
    if (v === undefined || !/^\d+$/.test(v) || n < min || n > max) throw new UsageError(`${flag} takes an integer from ${min} to ${max}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = () => argv[++i];
    switch (a) {
      case '--':
        break;
      case 'quick':
      case 'full':
        suite = a;
        break;
      case '--gpus':
        o.gpus = int(a, next(), 1, 256);
        break;
      case '--table': {
        const t = next();
        if (!t || !SHARD_TABLES.includes(t)) throw new UsageError(`--table takes one of ${SHARD_TABLES.join(', ')}`);
        o.table = t;
        break;
      }
      case '--capacity-log2':
        o.slotsLog2 = int(a, next(), 8, 30);
        break;
      case '--load': {
        const l = Number(next());
        if (!(l > 0 && l < 1)) throw new UsageError('--load takes a load factor between 0 and 1');
        o.load = l;
        break;
      }
      case '--reps':
        o.reps = int(a, next(), 1, 1000);
        break;
      case '--device-batch-log2':
        o.deviceBatchLog2 = int(a, next(), 4, 30);
        break;
      case '--no-e2e':
        o.e2e = false;
        break;
      case '--json':
      case '--markdown': {
        const v = next();
        if (!v) throw new UsageError(`${a} needs a file`);
        o[a.slice(2) as 'json' | 'markdown'] = v;
        break;
      }
      case '--require-hardware':
        o.requireHardware = true;
        break;
      case '--quiet':
        o.quiet = true;
        break;
      case '-h':
      case '--help':
        o.help = true;
        break;
      default:
        throw new UsageError(`unknown sharded option ${a}`);
    }
  }
  const preset = SUITES[suite];
  return {
    suite,
    gpus: o.gpus ?? null,
    table: o.table ?? 'linear-probe',
    slotsLog2: o.slotsLog2 ?? preset.slotsLog2,
    load: o.load ?? 0.9,
    reps: o.reps ?? preset.reps,
    deviceBatchLog2: o.deviceBatchLog2 ?? preset.deviceBatchLog2,
    e2e: o.e2e ?? true,
    json: o.json,
    markdown: o.markdown,
    requireHardware: o.requireHardware ?? false,
    quiet: o.quiet ?? false,
    help: o.help,
  };
}

/**
 * Opens the GPUs of the N-GPU run: every GPU of the host (requestGpus), or `count` of them; on a
 * software adapter, `count` devices of it (default 2), which run one after another on the CPU:
 * their numbers check the code path, not the scaling.
 */
export async function openShardGpus(
  count: number | null,
  options: { allowSoftware: boolean; dawnOptions: string[]; log: (m: string) => void },
) {
  const found = await requestGpus({
    allowSoftware: options.allowSoftware,
    dawnOptions: options.dawnOptions,
    log: options.log,
    count: count ?? undefined,
  });
  const first = found[0] as Gpu;
  if (first.isSoftware) {
    const want = count ?? 2;
    while (found.length < want) found.push(await requestGpu({ allowSoftware: true, dawnOptions: options.dawnOptions, log: () => {} }));
    return { gpus: found, note: `${want} devices of one software adapter (they share the CPU: no scaling to measure)` };
  }
  if (count !== null && found.length < count) {
    for (const g of found) g.destroy();
    throw new UsageError(`--gpus ${count}: this host opened ${found.length} GPU(s) (see the notice above about the device-select layer)`);
  }
  return { gpus: found, note: `${found.length} GPU(s)` };
}

export async function runShardedBench(
  argv: readonly string[],
  io: { stdout(t: string): void; stderr(t: string): void },
  dawnOptions: string[],
): Promise<number> {
  let options: ReturnType<typeof parseShardedArgs>;
  try {
    options = parseShardedArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`gpuhash-bench sharded: ${error.message}\n\n${shardedUsage()}\n`);
    return 2;
  }
  if (options.help) {
    io.stdout(`${shardedUsage()}\n`);
    return 0;
  }
  let gpus: Gpu[] = [];
  try {
    const opened = await openShardGpus(options.gpus, {
      allowSoftware: !options.requireHardware,
      dawnOptions,
      log: (m) => io.stderr(`${m}\n`),
    });
    gpus = opened.gpus;
    const log = options.quiet ? undefined : (line: string) => io.stderr(`${line}\n`);
    log?.(`gpuhash-bench sharded ${options.suite}: ${opened.note}: ${gpus.map((g) => g.describe()).join('; ')}`);
    const plan = {
      table: options.table,
      slotsLog2: options.slotsLog2,
      load: options.load,
      reps: options.reps,
      warmup: 1,
      warmupMs: (gpus[0] as Gpu).isSoftware ? 0 : 500,
      deviceBatchLog2: options.deviceBatchLog2,
      e2e: options.e2e,
      log,
    };
    const one = await measureSharded({ ...plan, gpus: gpus.slice(0, 1) });
    const many = gpus.length > 1 ? await measureSharded({ ...plan, gpus }) : [];
    const rows: ShardedRow[] = [...one, ...many];
    const ratios = scalingRows(one, many);
    const md = [
      `## gpuhash-bench sharded ${options.suite}: ${options.table}, 2^${options.slotsLog2} slots per GPU, load ${options.load}`,
      '',
      opened.note,
      '',
      formatShardedRows(rows),
      '',
      ...(ratios.length > 0
        ? ['| measure | N GPUs / 1 GPU |', '| --- | ---: |', ...ratios.map((r) => `| ${r.measure} | ${r.ratio.toFixed(2)}x |`)]
        : []),
    ].join('\n');
    io.stdout(`${md}\n`);
    const write = (path: string, text: string) => {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    };
    if (options.json) {
      const report = { date: new Date().toISOString(), options, devices: gpus.map((g) => describeDevice(g, dawnOptions)), rows, ratios };
      write(options.json, `${JSON.stringify(report, null, 2)}\n`);
    }
    if (options.markdown) write(options.markdown, `${md}\n`);
    return rows.every((r) => r.wrong === 0) ? 0 : 1;
  } catch (error) {
    io.stderr(`gpuhash-bench sharded: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  } finally {
    for (const g of gpus) g.destroy();
  }
}
