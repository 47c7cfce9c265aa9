/**
 * The sharded table on every GPU of a host (@gpuhash/sharded), for a GPU host without Node
 * tooling (bundled by pack-all.sh into .gpu-bundle/perf-sharded.mjs). This one file is both the
 * main program and the shards' script: ShardWorkers re-enters it as a worker thread or a child
 * process, where it serves tables instead.
 *
 *   B=.gpu-bundle; . tools/gpu-check/host-env.sh; . tools/gpu-check/device-select.sh
 *   $B/node $B/perf-sharded.mjs [--gpus N] [--table linear-probe] [--log2 27] [--load 0.9]
 *       [--check-log2 22] [--kinds worker,process] [--reps 5] [--json FILE] [--small]
 *
 * 1. Lists the GPUs (nvidia-smi's pci.bus_id where present, and the PCI bus) and the Vulkan
 *    device-select layer that ties one Dawn instance to one GPU (without it: one GPU, said so).
 * 2. Correctness: a sharded table over every GPU against the expected answers at 2^check-log2
 *    keys (insert, find hits and misses, erase half, find again): zero wrong answers, with shards
 *    on Gpus of this process and in each worker kind.
 * 3. Find GPU time (timestamps per shard, summed and at once) at 2^log2 slots per GPU and the load,
 *    against one GPU; end to end from host arrays against one GPU; a device-resident batch on
 *    GPU 0 (partition there, the other shards' parts through the host) and the raw copy rate
 *    (gpuhash-bench sharded's measurements, apps/bench/src/sharded/measure.ts).
 * 4. Shards in worker threads and in child processes: host batch move rates (a round trip of a
 *    batch, no GPU) and end to end from host arrays.
 * Prints markdown tables; --json writes everything.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { DEFAULT_DAWN_OPTIONS, type Dictionary, findDeviceSelectLayer, type Gpu, type HostGpu, listHostGpus } from '@gpuhash/core';
import { HostPartition, isShardWorker, ShardedTable, ShardWorkers, serveShard } from '@gpuhash/sharded';
import { samplesOf, timeReps } from '../../../apps/bench/src/gpu/time-reps';
import {
  benchKeys,
  benchValues,
  createShardTable,
  formatShardedRows,
  measureSharded,
  SHARD_TABLES,
  SHARD_WARMUP_REPS,
  type ShardedRow,
  scalingRows,
} from '../../../apps/bench/src/sharded/measure';
import { openShardGpus } from '../../../apps/bench/src/sharded/suite';
import { median } from '../../../apps/bench/src/stats';

interface TableSpec {
  table: string;
  capacity: number;
}

// ---- the shard side ------------------------------------------------------------------------------

async function serve(): Promise<void> {
  await serveShard({
    factories: { table: (gpu, options) => createShardTable((options as TableSpec).table, gpu, (options as TableSpec).capacity) },
    procedures: {
      /**
       * GPU time of the find kernel of the shard's newest table over `keys` (moved in), median of
       * `reps`; answers checked against `values`.
       */
      timeFind: async ({ gpu, targets }, ...args: never[]) => {
        const [keys, values, reps, warmupMs] = args as unknown as [Uint32Array, Uint32Array | null, number, number];
        const table = [...targets.values()].at(-1) as Dictionary;
        const q = gpu.upload(keys);
        const outV = gpu.createArray('u32', keys.length);
        const outF = gpu.createArray('u32', keys.length);
        try {
          const times = await timeReps(
            gpu,
            (enc, time) => table.encodeFind(enc, q.buffer, keys.length, outV.buffer, outF.buffer, time('find')),
            {
              // At least SHARD_WARMUP_REPS untimed finds in the same submission (see measure.ts).
              warmup: SHARD_WARMUP_REPS,
              reps,
              warmupMs,
              label: 'perf-sharded.find',
            },
          );
          const found = await gpu.download(outF);
          const got = await gpu.download(outV);
          let wrong = 0;
          for (let i = 0; i < keys.length; i++) if (values ? found[i] !== 1 || got[i] !== values[i] : found[i] !== 0) wrong++;
          return { ms: median(samplesOf(times, 'find')), wrong };
        } finally {
          for (const a of [q, outV, outF]) a.destroy();
        }
      },
    },
  });
}

// ---- the main program ------------------------------------------------------------------------------

interface Args {
  gpus: number | null;
  table: string;
  log2: number;
  load: number;
  checkLog2: number;
  kinds: Array<'worker' | 'process'>;
  reps: number;
  json?: string;
  small: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    gpus: null,
    table: 'linear-probe',
    log2: 27,
    load: 0.9,
    checkLog2: 22,
    kinds: ['worker', 'process'],
    reps: 5,
    small: false,
  };
  let log2: number | undefined;
  let checkLog2: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const v = () => {
      const x = argv[++i];
      if (x === undefined) usage(`${flag} needs a value`);
      return x as string;
    };
    if (flag === '--gpus') a.gpus = Number(v());
    else if (flag === '--table') a.table = v();
    else if (flag === '--log2') log2 = Number(v());
    else if (flag === '--load') a.load = Number(v());
    else if (flag === '--check-log2') checkLog2 = Number(v());
    else if (flag === '--kinds') a.kinds = v().split(',') as Args['kinds'];
    else if (flag === '--reps') a.reps = Number(v());
    else if (flag === '--json') a.json = v();
    else if (flag === '--small') a.small = true;
    else usage(`unknown argument ${flag}`);
  }
  a.log2 = log2 ?? (a.small ? 14 : 27);
  a.checkLog2 = checkLog2 ?? (a.small ? 14 : 22);
  if (a.small) a.reps = Math.min(a.reps, 3);
  if (!SHARD_TABLES.includes(a.table)) usage(`--table takes one of ${SHARD_TABLES.join(', ')}`);
  if (!a.kinds.every((k) => k === 'worker' || k === 'process')) usage('--kinds takes worker, process or both');
  if (!(a.load > 0 && a.load < 1)) usage('--load takes a load factor between 0 and 1');
  return a;
}

function usage(problem: string): never {
  console.error(
    `perf-sharded: ${problem}\nusage: perf-sharded [--gpus N] [--table NAME] [--log2 N] [--load L] [--check-log2 N] [--kinds worker,process] [--reps N] [--json FILE] [--small]`,
  );
  process.exit(2);
}

/** nvidia-smi's view of the GPUs (index, PCI bus id, name), where it is installed. */
function nvidiaSmi(): string[] {
  try {
    return execFileSync('nvidia-smi', ['--query-gpu=index,pci.bus_id,name,memory.total', '--format=csv,noheader'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** The expected answers of a sharded table at `2^log2` keys: insert, find hits and misses, erase half, find again. */
async function checkTable(table: ShardedTable, log2: number): Promise<{ keys: number; wrong: number; notes: string[] }> {
  const m = 2 ** log2;
  const keys = benchKeys(m);
  const misses = benchKeys(m, true);
  const values = benchValues(m);
  const notes: string[] = [];
  let wrong = 0;
  const tally = (what: string, bad: number) => {
    if (bad > 0) notes.push(`${what}: ${bad} wrong`);
    wrong += bad;
  };
  const r = await table.insert(keys, values);
  tally('insert', r.failed.length + Math.abs(r.inserted - m) + Math.abs(table.size - m));
  const hit = await table.find(keys);
  tally(
    'find hits',
    countWrong(hit.found, hit.values, (i) => values[i] as number),
  );
  const miss = await table.find(misses);
  tally(
    'find misses',
    countWrong(miss.found, miss.values, () => undefined),
  );
  const erased = await table.erase(keys.subarray(0, m / 2));
  tally('erase', Math.abs(erased - m / 2) + Math.abs(table.size - m / 2));
  const after = await table.find(keys);
  tally(
    'find after erase',
    countWrong(after.found, after.values, (i) => (i < m / 2 ? undefined : (values[i] as number))),
  );
  await table.clear();
  return { keys: m, wrong, notes };
}

function countWrong(found: Uint8Array, got: Uint32Array, want: (i: number) => number | undefined): number {
  let bad = 0;
  for (let i = 0; i < found.length; i++) {
    const w = want(i);
    if (w === undefined ? found[i] !== 0 : found[i] !== 1 || got[i] !== w) bad++;
  }
  return bad;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dawnOptions = [...DEFAULT_DAWN_OPTIONS];
  const report: Record<string, unknown> = { date: new Date().toISOString(), args };

  // 1. The GPUs and the layer.
  const smi = nvidiaSmi();
  const hostGpus: HostGpu[] = await listHostGpus();
  const layer = await findDeviceSelectLayer();
  console.log(`nvidia-smi: ${smi.length > 0 ? `\n  ${smi.join('\n  ')}` : 'not found'}`);
  console.log(`PCI GPUs: ${hostGpus.map((g) => `${g.pciBusId} (${g.vendor ?? g.vendorId.toString(16)})`).join(', ') || 'none'}`);
  console.log(
    `device-select layer: ${
      layer ??
      "NOT INSTALLED. Without it Dawn opens the first GPU only, so the N-GPU rows are skipped. Install Debian's mesa-vulkan-drivers (it puts VkLayer_MESA_device_select.json in /usr/share/vulkan/implicit_layer.d), or source tools/gpu-check/device-select.sh before this script (it installs the copy pack-all.sh put in the bundle)."
    }`,
  );
  if (hostGpus.length > 1 && layer)
    console.log(`  each shard: DRI_PRIME=pci-DDDD_BB_DD_F MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE=1 while its Vulkan instance is made`);
  report.environment = { nvidiaSmi: smi, hostGpus, layer: layer ?? null };

  const { gpus, note } = await openShardGpus(args.gpus, {
    allowSoftware: args.small || hostGpus.length === 0,
    dawnOptions,
    log: (m) => console.log(m),
  });
  console.log(`opened: ${note}\n  ${gpus.map((g, i) => `${i}: ${g.describe()}`).join('\n  ')}`);
  if (gpus.length === 1) console.log('one GPU only: the N-GPU rows are skipped.');
  report.devices = gpus.map((g) => g.describe());
  const G = gpus.length;
  const warmupMs = (gpus[0] as Gpu).isSoftware ? 0 : 500;
  const rows: ShardedRow[] = [];
  const checks: Array<{ via: string; gpus: number; keys: number; wrong: number; notes: string[] }> = [];

  // 2. Correctness, shards on this process's Gpus.
  const checkCapacity = 2 ** (args.checkLog2 + 1);
  {
    const table = await ShardedTable.create(gpus, (gpu) => createShardTable(args.table, gpu, checkCapacity));
    const c = await checkTable(table, args.checkLog2);
    table.destroy();
    checks.push({ via: 'local', gpus: G, ...c });
    console.log(`check (local, ${G} GPU(s), 2^${args.checkLog2} keys): ${c.wrong} wrong ${c.notes.join('; ')}`);
  }

  // 3. The bench's measurements on 1 and G GPUs.
  const plan = {
    table: args.table,
    slotsLog2: args.log2,
    load: args.load,
    reps: args.reps,
    warmup: 1,
    warmupMs,
    deviceBatchLog2: args.small ? 12 : 24,
    e2e: true,
    log: (l: string) => console.log(l),
  };
  // A failing section is reported and the others still run: GPU time is scarce.
  const errors: string[] = [];
  const attempt = async <T>(what: string, body: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await body();
    } catch (error) {
      const text = `${what}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
      errors.push(text);
      console.log(`FAILED ${text}`);
      return fallback;
    }
  };
  const one = await attempt('1 GPU', () => measureSharded({ ...plan, gpus: gpus.slice(0, 1) }), []);
  const many = G > 1 ? await attempt(`${G} GPUs`, () => measureSharded({ ...plan, gpus }), []) : [];
  rows.push(...one, ...many);

  // 4. Shards in worker threads and child processes.
  const moves: Array<{ kind: string; words: number; ms: number; gbPerS: number }> = [];
  const n = Math.floor(args.load * 2 ** args.log2) * G;
  for (const kind of args.kinds) {
    await attempt(`${kind} shards`, () => viaWorkers(kind), undefined);
  }
  async function viaWorkers(kind: 'worker' | 'process'): Promise<void> {
    console.log(`\n${kind === 'worker' ? 'worker threads' : 'child processes'}: opening ${G}`);
    const workers = await ShardWorkers.open({
      script: new URL(import.meta.url),
      kind,
      count: G,
      gpu: { allowSoftware: (gpus[0] as Gpu).isSoftware, dawnOptions },
      log: (m) => console.log(m),
    });
    try {
      console.log(`  ${workers.placements.map((p) => `${p.shard}: ${p.pciBusId ?? 'default GPU'} ${p.device}`).join('\n  ')}`);
      // Host batch moves: a round trip of a batch, no GPU work.
      for (const log2 of args.small ? [16, 20] : [20, 24, 26]) {
        const words = 2 ** log2;
        const times: number[] = [];
        let data = new Uint32Array(words).fill(7);
        for (let r = 0; r < args.reps + 1; r++) {
          const t0 = performance.now();
          data = await workers.echo(0, data);
          if (r > 0) times.push(performance.now() - t0);
        }
        const ms = median(times);
        moves.push({ kind, words, ms, gbPerS: (2 * 4 * words) / ms / 1e6 });
      }
      console.log(
        `  moves: ${moves
          .filter((m) => m.kind === kind)
          .map((m) => `2^${Math.log2(m.words)} words ${m.gbPerS.toFixed(2)} GB/s`)
          .join(', ')}`,
      );
      // Correctness through the workers.
      {
        const table = await ShardedTable.create(workers, { factory: 'table', options: { table: args.table, capacity: checkCapacity } });
        const c = await checkTable(table, args.checkLog2);
        table.destroy();
        checks.push({ via: kind, gpus: G, ...c });
        console.log(`  check (${kind}, 2^${args.checkLog2} keys): ${c.wrong} wrong ${c.notes.join('; ')}`);
      }
      // End to end from host arrays, and the shards' GPU time measured in the workers.
      const table = await ShardedTable.create(workers, { factory: 'table', options: { table: args.table, capacity: 2 ** args.log2 } });
      try {
        const keys = benchKeys(n);
        const values = benchValues(n);
        const t0 = performance.now();
        const built = await table.insert(keys, values);
        const buildMs = performance.now() - t0;
        rows.push({
          gpus: G,
          via: kind,
          measure: 'insert e2e (build)',
          keys: n,
          wallMs: buildMs,
          gops: n / buildMs / 1e6,
          wrong: built.failed.length,
        });
        const times: number[] = [];
        let wrong = 0;
        for (let r = 0; r < Math.min(args.reps, 3); r++) {
          const t1 = performance.now();
          const got = await table.find(keys);
          times.push(performance.now() - t1);
          wrong = countWrong(got.found, got.values, (i) => values[i] as number);
        }
        const ms = median(times);
        rows.push({ gpus: G, via: kind, measure: 'find-hit e2e', keys: n, wallMs: ms, gops: n / ms / 1e6, wrong });
        const part = new HostPartition(keys, 1, G, table.seed);
        const kp = part.split(keys);
        const vp = part.split(values);
        const perShard = await Promise.all(
          kp.map((k, s) => {
            // The keys move to the worker (between threads the array is detached): count them first.
            const count = k.length;
            return workers.run<{ ms: number; wrong: number }>(s, 'timeFind', k, vp[s], args.reps, warmupMs).then((t) => ({ ...t, count }));
          }),
        );
        rows.push({
          gpus: G,
          via: kind,
          measure: 'find-hit GPU',
          keys: n,
          shardGpuMs: perShard.map((p) => p.ms),
          gops: perShard.reduce((c, p) => c + p.count / p.ms / 1e6, 0),
          gopsSummedTime: n / perShard.reduce((c, p) => c + p.ms, 0) / 1e6,
          wrong: perShard.reduce((c, p) => c + p.wrong, 0),
        });
      } finally {
        table.destroy();
      }
    } finally {
      await workers.close();
    }
  }

  // Report.
  const ratios = scalingRows(one, many);
  const local1 = one.find((r) => r.measure === 'find-hit e2e');
  const viaRatios = rows
    .filter((r) => r.via !== 'local' && r.measure === 'find-hit e2e' && local1)
    .map((r) => ({ measure: `find-hit e2e (${r.via}, ${G} GPUs) / 1 GPU local`, ratio: r.gops / (local1 as ShardedRow).gops }));
  const md = [
    `## perf-sharded: ${args.table}, 2^${args.log2} slots per GPU, load ${args.load}, ${G} GPU(s)`,
    '',
    `devices: ${gpus.map((g) => g.describe()).join('; ')}`,
    '',
    '### correctness',
    '',
    '| via | GPUs | keys | wrong | notes |',
    '| --- | ---: | ---: | ---: | --- |',
    ...checks.map((c) => `| ${c.via} | ${c.gpus} | ${c.keys} | ${c.wrong} | ${c.notes.join('; ')} |`),
    '',
    '### throughput',
    '',
    formatShardedRows(rows),
    '',
    '| ratio | value |',
    '| --- | ---: |',
    ...[...ratios, ...viaRatios].map((r) => `| ${r.measure} | ${r.ratio.toFixed(2)}x |`),
    '',
    '### host batch moves (round trip, no GPU)',
    '',
    '| kind | words | ms | GB/s |',
    '| --- | ---: | ---: | ---: |',
    ...moves.map((m) => `| ${m.kind} | ${m.words} | ${m.ms.toFixed(2)} | ${m.gbPerS.toFixed(2)} |`),
  ].join('\n');
  console.log(`\n${md}`);
  if (errors.length > 0) console.log(`\n### failed sections\n\n${errors.map((e) => `- ${e.split('\n')[0]}`).join('\n')}`);
  if (args.json)
    writeFileSync(args.json, `${JSON.stringify({ ...report, checks, rows, ratios: [...ratios, ...viaRatios], moves, errors }, null, 2)}\n`);
  for (const g of gpus) g.destroy();
  const ok = errors.length === 0 && checks.every((c) => c.wrong === 0) && rows.every((r) => r.wrong === 0);
  console.log(ok ? 'perf-sharded: every answer right' : 'perf-sharded: WRONG ANSWERS (see the tables)');
  process.exit(ok ? 0 : 1);
}

if (await isShardWorker()) await serve();
else await main();
