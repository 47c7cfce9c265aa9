import { describe, expect, it } from 'vitest';
import { callerDirectory, DEFAULT_LOADS, parseArgs, resolvePaths, SUITES, UsageError, usage } from '../src/args';
import { main } from '../src/main';
import { selectWorkloads, WORKLOADS, workloadNames } from '../src/workloads';

const known = { tables: ['linear-probe', 'hive'], workloads: workloadNames() };

describe('parseArgs', () => {
  it('defaults to the quick suite', () => {
    const o = parseArgs([], known);
    expect(o).toMatchObject({
      suite: 'quick',
      capacityLog2: 12,
      reps: 3,
      warmup: 1,
      warmupMs: null,
      batchLog2: 6,
      loads: [0.5, 0.9],
      leftOut: { loads: [0.75, 0.95] },
      tables: null,
      workloads: null,
      zipf: null,
      e2e: true,
    });
  });

  it('takes the full suite, positionally or by flag', () => {
    expect(parseArgs(['full'], known)).toMatchObject({
      suite: 'full',
      capacityLog2: 27,
      batchLog2: 16,
      reps: 5,
      loads: DEFAULT_LOADS,
      leftOut: { loads: [] },
    });
    expect(parseArgs(['--suite', 'full'], known).suite).toBe('full');
    expect(parseArgs(['--suite=full'], known).suite).toBe('full');
  });

  it('reads every option', () => {
    const o = parseArgs(
      [
        'quick',
        '--table',
        'linear-probe,hive',
        '--workload=build,mixed',
        '--loads',
        '0.9,0.5',
        '--capacity-log2',
        '12',
        '--reps',
        '7',
        '--warmup',
        '0',
        '--warmup-ms',
        '250',
        '--batch-log2',
        '4',
        '--zipf',
        '0.99',
        '--no-e2e',
        '--json',
        'a.json',
        '--markdown',
        'a.md',
        '--svg',
        'charts',
        '--compare',
        'old.json',
        '--git-revision',
        'deadbeef',
        '--require-hardware',
        '--quiet',
      ],
      known,
    );
    expect(o).toMatchObject({
      tables: ['linear-probe', 'hive'],
      workloads: ['build', 'mixed'],
      loads: [0.5, 0.9],
      capacityLog2: 12,
      reps: 7,
      warmup: 0,
      warmupMs: 250,
      batchLog2: 4,
      zipf: 0.99,
      e2e: false,
      json: 'a.json',
      markdown: 'a.md',
      svg: 'charts',
      compare: 'old.json',
      gitRevision: 'deadbeef',
      requireHardware: true,
      quiet: true,
    });
  });

  it('ignores the `--` that `pnpm bench -- ...` passes on', () => {
    const plain = parseArgs(['full', '--json', 'a.json', '--reps', '2'], known);
    expect(parseArgs(['--', 'full', '--json', 'a.json', '--reps', '2'], known)).toEqual(plain);
    expect(parseArgs(['full', '--', '--json', 'a.json', '--reps', '2'], known)).toEqual(plain);
    expect(parseArgs(['--'], known)).toEqual(parseArgs([], known));
  });

  it('reports no left-out loads when --loads is given', () => {
    expect(parseArgs(['--loads', '0.75'], known).leftOut).toEqual({ loads: [] });
    expect(SUITES.quick.loads.every((l) => DEFAULT_LOADS.includes(l))).toBe(true);
  });

  it.each([
    [['--bogus'], /unknown option --bogus/],
    [['--json', '--'], /--json needs a value/],
    [['medium'], /unknown suite 'medium'/],
    [['quick', 'full'], /two suites/],
    [['--reps'], /--reps needs a value/],
    [['--reps', '0'], /--reps takes an integer/],
    [['--reps', '2.5'], /--reps takes an integer/],
    [['--reps', '--quiet'], /--reps needs a value/],
    [['--capacity-log2', '40'], /--capacity-log2 takes an integer from 8 to 30/],
    [['--loads', '0.5,1.2'], /--loads takes load factors between 0 and 1/],
    [['--loads', 'x'], /--loads/],
    [['--table', 'cuckoo'], /unknown name 'cuckoo'/],
    [['--workload', 'build,sort'], /unknown name 'sort'/],
    [['--zipf', '-1'], /--zipf takes an exponent/],
    [['--capacity-log2', '10', '--batch-log2', '10'], /must be below/],
    [['--quiet=yes'], /takes no value/],
    [['--reps', '3', '--reps', '4'], /given twice/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseArgs(argv, known)).toThrow(UsageError);
    expect(() => parseArgs(argv, known)).toThrow(message);
  });

  it('lists every table and workload in the usage text', () => {
    const text = usage(known);
    for (const name of [...known.tables, ...known.workloads]) expect(text).toContain(name);
  });
});

describe('output paths', () => {
  const ownScript = { INIT_CWD: '/home/me/project', npm_package_name: '@gpuhash/bench' };

  it("resolve against the caller's directory when pnpm runs this package's script", () => {
    expect(callerDirectory(ownScript, '/repo/apps/bench')).toBe('/home/me/project');
    // Run directly, or by another package's script: its working directory.
    expect(callerDirectory({}, '/repo/apps/bench')).toBe('/repo/apps/bench');
    expect(callerDirectory({ INIT_CWD: '/elsewhere', npm_package_name: 'other' }, '/repo/other')).toBe('/repo/other');
  });

  it('makes --json, --markdown, --svg and --compare absolute, leaving absolute paths alone', () => {
    const o = resolvePaths(
      parseArgs(['--json', 'out/a.json', '--markdown', '../a.md', '--svg', 'charts', '--compare', '/abs/old.json'], known),
      '/home/me/project',
    );
    expect(o).toMatchObject({
      json: '/home/me/project/out/a.json',
      markdown: '/home/me/a.md',
      svg: '/home/me/project/charts',
      compare: '/abs/old.json',
    });
    expect(resolvePaths(parseArgs([], known), '/x').json).toBeUndefined();
  });
});

describe('workload selection', () => {
  it('selects by name and by group, in run order', () => {
    // Every workload but the opt-in studies (incremental-rebuild), which run only when named.
    expect(selectWorkloads(null).map((w) => w.name)).toEqual(WORKLOADS.filter((w) => !w.optIn).map((w) => w.name));
    expect(selectWorkloads(['incremental-rebuild']).map((w) => w.name)).toEqual(['incremental-rebuild']);
    expect(selectWorkloads(['incremental', 'build']).map((w) => w.name)).toEqual(['build', 'incremental']);
    expect(selectWorkloads(['mixed']).map((w) => w.name)).toEqual(['mixed-hive', 'mixed-slab-u100', 'mixed-slab-u40', 'mixed-slab-u20']);
    expect(selectWorkloads(['find']).map((w) => w.name)).toEqual(['find-hit', 'find-miss']);
  });
});

describe('main with bad arguments', () => {
  function capture() {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { stdout: (t: string) => void out.push(t), stderr: (t: string) => void err.push(t), stderrIsTTY: false } };
  }

  it('prints the problem and the usage and exits 2, touching no GPU', async () => {
    const { out, err, io } = capture();
    expect(await main(['--reps', 'many'], io)).toBe(2);
    expect(out.join('')).toBe('');
    expect(err.join('')).toMatch(/^gpuhash-bench: --reps takes an integer[\s\S]*usage: gpuhash-bench/);
  });

  it('exits 2 when the --compare file is missing', async () => {
    const { err, io } = capture();
    expect(await main(['--compare', '/nonexistent/old.json'], io)).toBe(2);
    expect(err.join('')).toMatch(/--compare: cannot read/);
  });

  it("reads --compare relative to pnpm's INIT_CWD, not the package folder", async () => {
    const { err, io } = capture();
    const env = { INIT_CWD: '/nonexistent/caller', npm_package_name: '@gpuhash/bench' };
    expect(await main(['--', '--compare', 'old.json'], { ...io, env, cwd: '/nonexistent/apps/bench' })).toBe(2);
    expect(err.join('')).toMatch(/--compare: cannot read \/nonexistent\/caller\/old\.json/);
  });

  it('prints the usage for --help and exits 0', async () => {
    const { out, io } = capture();
    expect(await main(['--help'], io)).toBe(0);
    expect(out.join('')).toMatch(/^usage: gpuhash-bench/);
  });
});
