import { describe, expect, it } from 'vitest';
import { DEFAULT_LOADS, parseArgs, UsageError, usage } from '../src/args';
import { main } from '../src/main';
import { selectWorkloads, WORKLOADS, workloadNames } from '../src/workloads';

const known = { tables: ['linear-probe', 'hive'], workloads: workloadNames() };

describe('parseArgs', () => {
  it('defaults to the quick suite', () => {
    const o = parseArgs([], known);
    expect(o).toMatchObject({
      suite: 'quick',
      capacityLog2: 16,
      reps: 5,
      warmup: 1,
      warmupMs: null,
      batchLog2: 10,
      loads: DEFAULT_LOADS,
      tables: null,
      workloads: null,
      zipf: null,
      e2e: true,
    });
  });

  it('takes the full suite, positionally or by flag', () => {
    expect(parseArgs(['full'], known)).toMatchObject({ suite: 'full', capacityLog2: 27, batchLog2: 16 });
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

  it.each([
    [['--bogus'], /unknown option --bogus/],
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

describe('workload selection', () => {
  it('selects by name and by group, in run order', () => {
    expect(selectWorkloads(null).length).toBe(WORKLOADS.length);
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

  it('prints the usage for --help and exits 0', async () => {
    const { out, io } = capture();
    expect(await main(['--help'], io)).toBe(0);
    expect(out.join('')).toMatch(/^usage: gpuhash-bench/);
  });
});
