import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readBenchDir } from '../lib/bench/load';
import { byDevice, chartsByOperation, collectRuns, normalizeRun, runAssetPath } from '../lib/bench/schema';
import { BENCH_RESULTS_DIR } from './support/paths';

// A committed result file, exactly as apps/bench wrote it (apps/bench/src/results.ts, schema 1).
const FILE = '2026-11-22-h200-full-09f1f96-host39.json';
const committed = JSON.parse(readFileSync(new URL(`../../bench/results/${FILE}`, import.meta.url), 'utf8')) as {
  date: string;
  git: { revision: string };
  device: { description: string; driver: string };
  capacity: number;
  roofline: { gather4: { opsPerSecond: number } };
  results: { table: string; workload: string; operation: string; load: number; loadTo?: number; gops: number | null }[];
};

function read() {
  const run = normalizeRun(FILE, committed);
  if ('reason' in run) throw new Error(run.reason);
  return run;
}

describe('benchmark results', () => {
  it("reads apps/bench's result file: device, driver, commit, date, roofline, every row with a rate", () => {
    const run = read();
    expect(run).toMatchObject({
      file: FILE,
      date: committed.date,
      git: committed.git.revision,
      driver: committed.device.driver,
      suite: 'full',
      capacity: committed.capacity,
    });
    expect(run.git).toBe('09f1f9600a47');
    expect(run.driver).toMatch(/^NVIDIA: 580/);
    expect(run.device.description).toBe(committed.device.description);
    expect(run.device.details).toContainEqual(['vendor', 'nvidia']);
    // The roofline is the random 4-byte gather rate, in billions per second.
    expect(run.rooflineGops).toBeCloseTo(committed.roofline.gather4.opsPerSecond / 1e9, 9);
    expect(run.rooflineGops).toBeGreaterThan(30);
    expect(run.rows).toHaveLength(committed.results.filter((r) => typeof r.gops === 'number').length);
    const incremental = run.rows.find((r) => r.workload === 'incremental');
    expect(incremental?.loadTo).toBeGreaterThan(incremental?.load ?? 1);
  });

  it('charts throughput against load per operation, one series per table and workload', () => {
    const charts = chartsByOperation(read().rows);
    expect(charts.map((c) => c.operation)).toEqual(['insert', 'find', 'erase', 'mixed']);
    const insert = charts[0]?.series ?? [];
    expect(insert.map((s) => s.label).sort()).toEqual([
      'hive · build',
      'hive · incremental',
      'linear-probe · build',
      'linear-probe · incremental',
    ]);
    const build = insert.find((s) => s.label === 'linear-probe · build');
    expect(build?.points.map((p) => p.load)).toEqual([0.5, 0.75, 0.9, 0.95]);
    // The mixed chart carries 8 series: more than the old 5-colour palette could tell apart.
    expect(charts[3]?.series).toHaveLength(8);
  });

  it('marks a dirty tree in the commit and still reads older shapes of the file', () => {
    const dirty = normalizeRun('d.json', { ...committed, git: { revision: 'abc1234', dirty: true } });
    expect(dirty).toMatchObject({ git: 'abc1234-dirty' });
    const old = normalizeRun('x.json', { device: 'SwiftShader', git: { commit: 'abc' }, roofline: 0.4, results: [] });
    expect(old).toMatchObject({ git: 'abc', driver: '', device: { description: 'SwiftShader', details: [] }, rooflineGops: 0.4, rows: [] });
  });

  it('skips unreadable files with a reason and orders runs newest first', () => {
    const older = { ...committed, date: '2025-01-01T00:00:00Z' };
    const data = collectRuns([
      { file: 'old.json', json: older },
      { file: 'new.json', json: committed },
      { file: 'bad.json', json: [1, 2] },
      { file: 'torn.json', error: 'unreadable: Unexpected end of JSON input' },
      { file: 'empty.json', json: { date: 'x' } },
    ]);
    expect(data.runs.map((r) => r.file)).toEqual(['new.json', 'old.json']);
    expect(data.skipped).toEqual([
      { file: 'bad.json', reason: 'not a JSON object' },
      { file: 'torn.json', reason: 'unreadable: Unexpected end of JSON input' },
      { file: 'empty.json', reason: 'no results array' },
    ]);
  });

  it('keeps the newest run of each device in full and lists the rest by summary', () => {
    const other = { ...committed, date: '2026-12-01T00:00:00Z', device: { ...committed.device, description: 'SwiftShader Device' } };
    const older = { ...committed, date: '2026-01-01T00:00:00Z', git: { revision: 'aaaaaaa' } };
    const page = byDevice(
      collectRuns([
        { file: 'old.json', json: older },
        { file: 'new.json', json: committed },
        { file: 'ss.json', json: other },
      ]),
    );
    expect(page.total).toBe(3);
    expect(page.devices.map((d) => [d.device, d.latest.file, d.runs.map((r) => r.file)])).toEqual([
      ['SwiftShader Device', 'ss.json', ['ss.json']],
      [committed.device.description, 'new.json', ['new.json', 'old.json']],
    ]);
    expect(page.devices[1]?.runs[1]).toEqual({
      file: 'old.json',
      date: '2026-01-01T00:00:00Z',
      git: 'aaaaaaa',
      driver: committed.device.driver,
      suite: 'full',
      rows: 110,
    });
  });

  it('reads every committed result file, each to its own asset path', () => {
    const data = readBenchDir(BENCH_RESULTS_DIR);
    expect(data.skipped).toEqual([]);
    expect(data.runs.length).toBeGreaterThan(0);
    const paths = data.runs.map((r) => runAssetPath(r.file));
    expect(new Set(paths).size).toBe(paths.length);
    expect(runAssetPath(FILE)).toBe(`/bench/runs/${FILE}`);
  });
});
