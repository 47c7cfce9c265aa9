import { resolve } from 'node:path';

/** Settings of one run, from the command line. */
export interface Options {
  suite: 'quick' | 'full';
  /** Selected tables; null = all. */
  tables: string[] | null;
  /** Selected workloads or groups; null = all. */
  workloads: string[] | null;
  /** Loads of the full suite that this suite's defaults leave out: reported as skipped. */
  leftOut: { loads: number[] };
  loads: number[];
  capacityLog2: number;
  reps: number;
  warmup: number;
  /** Minimum warm-up time per measurement; null = 500 ms on a GPU, none on a software adapter. */
  warmupMs: number | null;
  batchLog2: number;
  /** Keys per buffer of the key streams, log2; null = as many as one storage binding holds. */
  keyChunkLog2: number | null;
  zipf: number | null;
  e2e: boolean;
  json?: string;
  markdown?: string;
  svg?: string;
  compare?: string;
  gitRevision?: string;
  requireHardware: boolean;
  quiet: boolean;
  help: boolean;
}

/** A bad command line: the CLI prints the message and the usage, and exits with status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What the arguments are checked against. */
export interface Known {
  tables: readonly string[];
  workloads: readonly string[];
}

/** Load factors of the full suite (and of --loads' default there). */
export const DEFAULT_LOADS = [0.5, 0.75, 0.9, 0.95];

/** What a suite runs unless an option says otherwise. */
export interface Suite {
  capacityLog2: number;
  reps: number;
  loads: readonly number[];
}

/**
 * quick: a smoke run of every table and workload, checked answers included, in about 20 s on two
 * CPU cores with SwiftShader (setup.sh and CI run it): 2^12 slots, two loads, three reps. full: GPU
 * scale, every load.
 */
export const SUITES: Record<'quick' | 'full', Suite> = {
  quick: { capacityLog2: 12, reps: 3, loads: [0.5, 0.9] },
  full: { capacityLog2: 27, reps: 5, loads: DEFAULT_LOADS },
};

/** The usage text (`--help`, and after every usage error). */
export function usage(known: Known): string {
  return `usage: gpuhash-bench [quick|full] [options]

Benchmarks gpuhash tables on the WebGPU device of this machine (SwiftShader when there is no GPU).

suites:
  quick                  the default: every table and workload, small (seconds on a CPU with SwiftShader):
                         2^${SUITES.quick.capacityLog2} slots, loads ${SUITES.quick.loads.join(',')}, ${SUITES.quick.reps} reps
  full                   2^${SUITES.full.capacityLog2} slots, loads ${SUITES.full.loads.join(',')}, ${SUITES.full.reps} reps (a GPU)
  hkv [quick|full]       HierarchicalKV's cache workloads (gpuhash-bench hkv --help)
  sharded [quick|full]   one table sharded over 1 and N GPUs (gpuhash-bench sharded --help)

options:
  --table NAMES          comma-separated tables (default all): ${known.tables.join(', ')}
  --workload NAMES       comma-separated workloads or groups (default all):
                         ${known.workloads.join(', ')}
  --loads LIST           load factors (default: the suite's)
  --capacity-log2 N      table slots = 2^N (default: the suite's)
  --reps N               timed repetitions, median reported (default: the suite's)
  --warmup N             untimed repetitions first (default 1)
  --warmup-ms MS         and at least this much warm-up work (default 500 on a GPU, 0 on SwiftShader)
  --batch-log2 N         incremental batch size 2^N (default min(16, capacity-log2 - 6))
  --key-chunk-log2 N     key streams in buffers of 2^N keys (default: one storage binding, 2^28 on GPUs)
  --zipf S               find-hit queries drawn Zipf(S) from the inserted keys (default: each key once)
  --no-e2e               skip end-to-end (host to device and back) timings
  --json FILE            write the results JSON
  --markdown FILE        write markdown tables
  --svg DIR              write SVG charts into DIR
  --compare OLD.json     print throughput ratios against an earlier --json
  --git-revision REV     revision to record (default: git rev-parse HEAD, or $GPUHASH_GIT_REVISION)
  --require-hardware     fail instead of falling back to SwiftShader
  --quiet                no progress output
  -h, --help             this text

exit status: 0 all results correct, 1 a wrong answer or failed run, 2 bad arguments`;
}

const TAKES_VALUE = new Set([
  '--suite',
  '--key-chunk-log2',
  '--table',
  '--tables',
  '--workload',
  '--workloads',
  '--loads',
  '--capacity-log2',
  '--reps',
  '--warmup',
  '--warmup-ms',
  '--batch-log2',
  '--zipf',
  '--json',
  '--markdown',
  '--svg',
  '--compare',
  '--git-revision',
]);

function integer(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`${flag} takes an integer from ${min} to ${max}, got '${text}'`);
  return n;
}

function list(flag: string, text: string, allowed: readonly string[]): string[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (items.length === 0) throw new UsageError(`${flag} needs at least one name`);
  for (const item of items)
    if (!allowed.includes(item)) throw new UsageError(`${flag}: unknown name '${item}' (known: ${allowed.join(', ')})`);
  return items;
}

function loads(text: string): number[] {
  const values = text.split(',').map((s) => Number(s.trim()));
  for (const v of values) if (!(v > 0 && v < 1)) throw new UsageError(`--loads takes load factors between 0 and 1, got '${text}'`);
  return [...new Set(values)].sort((a, b) => a - b);
}

/** The package whose own `bench` script runs the CLI (pnpm runs it in apps/bench). */
const PACKAGE_NAME = '@gpuhash/bench';

/**
 * The directory relative paths of --json, --markdown, --svg and --compare are taken from: where the
 * caller typed the command. pnpm runs a package's scripts in the package folder and records the
 * caller's directory in INIT_CWD; it is used only when this package's own script runs the CLI (another
 * package's script that calls gpuhash-bench means its own folder, as scripts do).
 */
export function callerDirectory(env: Record<string, string | undefined>, cwd: string): string {
  return env.INIT_CWD && env.npm_package_name === PACKAGE_NAME ? env.INIT_CWD : cwd;
}

/** The options with --json, --markdown, --svg and --compare made absolute against `base`. */
export function resolvePaths(options: Options, base: string): Options {
  const out = { ...options };
  for (const key of ['json', 'markdown', 'svg', 'compare'] as const) {
    const path = options[key];
    if (path !== undefined) out[key] = resolve(base, path);
  }
  return out;
}

/** Parses the arguments (without node and the script); throws UsageError on anything wrong. */
export function parseArgs(argv: readonly string[], known: Known): Options {
  let suite: Options['suite'] | undefined;
  const seen = new Set<string>();
  const o: Partial<Options> & { e2e: boolean; requireHardware: boolean; quiet: boolean; help: boolean } = {
    e2e: true,
    requireHardware: false,
    quiet: false,
    help: false,
  };
  let capacityLog2: number | undefined;
  let batchLog2: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    // `pnpm bench -- full` passes the separator on: a lone `--` means nothing here.
    if (arg === '--') continue;
    // --flag=value is the same as --flag value.
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || (inline === undefined && v.startsWith('--'))) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (inline !== undefined && !TAKES_VALUE.has(flag)) throw new UsageError(`${flag} takes no value`);
    if (flag.startsWith('-') && seen.has(flag)) throw new UsageError(`${flag} given twice`);
    seen.add(flag);
    switch (flag) {
      case 'quick':
      case 'full':
        if (suite) throw new UsageError(`two suites given: ${suite} and ${flag}`);
        suite = flag;
        break;
      case '--suite': {
        const v = value();
        if (v !== 'quick' && v !== 'full') throw new UsageError(`--suite takes quick or full, got '${v}'`);
        if (suite) throw new UsageError(`two suites given: ${suite} and ${v}`);
        suite = v;
        break;
      }
      case '--table':
      case '--tables':
        o.tables = list('--table', value(), known.tables);
        break;
      case '--workload':
      case '--workloads':
        o.workloads = list('--workload', value(), known.workloads);
        break;
      case '--loads':
        o.loads = loads(value());
        break;
      case '--capacity-log2':
        capacityLog2 = integer(flag, value(), 8, 30);
        break;
      case '--reps':
        o.reps = integer(flag, value(), 1, 1000);
        break;
      case '--warmup':
        o.warmup = integer(flag, value(), 0, 100);
        break;
      case '--warmup-ms':
        o.warmupMs = integer(flag, value(), 0, 10_000);
        break;
      case '--batch-log2':
        batchLog2 = integer(flag, value(), 0, 29);
        break;
      case '--key-chunk-log2':
        o.keyChunkLog2 = integer(flag, value(), 4, 30);
        break;
      case '--zipf': {
        const text = value();
        const s = Number(text);
        if (!(s > 0 && s <= 4)) throw new UsageError(`--zipf takes an exponent in (0, 4], got '${text}'`);
        o.zipf = s;
        break;
      }
      case '--no-e2e':
        o.e2e = false;
        break;
      case '--json':
      case '--markdown':
      case '--svg':
      case '--compare':
        o[flag.slice(2) as 'json' | 'markdown' | 'svg' | 'compare'] = value();
        break;
      case '--git-revision':
        o.gitRevision = value();
        break;
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
        throw new UsageError(flag.startsWith('-') ? `unknown option ${flag}` : `unknown suite '${flag}' (quick or full)`);
    }
  }
  const chosen = suite ?? 'quick';
  const preset = SUITES[chosen];
  const log2 = capacityLog2 ?? preset.capacityLog2;
  const loadList = o.loads ?? [...preset.loads];
  const batch = batchLog2 ?? Math.max(0, Math.min(16, log2 - 6));
  if (batch >= log2) throw new UsageError(`--batch-log2 ${batch} must be below --capacity-log2 ${log2}`);
  return {
    suite: chosen,
    tables: o.tables ?? null,
    workloads: o.workloads ?? null,
    leftOut: { loads: o.loads ? [] : SUITES.full.loads.filter((l) => !loadList.includes(l)) },
    loads: loadList,
    capacityLog2: log2,
    reps: o.reps ?? preset.reps,
    warmup: o.warmup ?? 1,
    warmupMs: o.warmupMs ?? null,
    batchLog2: batch,
    keyChunkLog2: o.keyChunkLog2 ?? null,
    zipf: o.zipf ?? null,
    e2e: o.e2e,
    json: o.json,
    markdown: o.markdown,
    svg: o.svg,
    compare: o.compare,
    gitRevision: o.gitRevision,
    requireHardware: o.requireHardware,
    quiet: o.quiet,
    help: o.help,
  };
}
