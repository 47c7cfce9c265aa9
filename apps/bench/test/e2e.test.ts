import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Gpu } from '@gpuhash/core';
import { testGpu } from '@gpuhash/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { type BenchReport, validateReport } from '../src/results';
import { linearProbe } from '../src/tables/linear-probe';
import type { TableEntry } from '../src/tables/types';
import { checkXml } from './xml';

let gpu: Gpu;
const dir = mkdtempSync(join(tmpdir(), 'gpuhash-bench-'));

beforeAll(async () => {
  gpu = await testGpu();
});

async function run(argv: string[], tables?: TableEntry[]) {
  const out: string[] = [];
  const err: string[] = [];
  const status = await main(['--capacity-log2', '12', '--reps', '2', '--git-revision', 'test-rev', ...argv], {
    gpu,
    tables,
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    stderrIsTTY: false,
  });
  return { status, out: out.join(''), err: err.join('') };
}

// A linear-probe table whose inserts store each key as its own value: sizes stay right, finds return wrong values.
const wrongValues: TableEntry = {
  ...linearProbe,
  name: 'wrong-values',
  async create(g, capacity) {
    const table = await linearProbe.create(g, capacity);
    return { ...table, encodeInsert: (encoder, keys, _values, n, tw) => table.encodeInsert(encoder, keys, keys, n, tw) };
  },
};

// A table without erase or mixed batches: those workloads must be skipped with a note.
const insertFindOnly: TableEntry = { ...linearProbe, name: 'insert-find-only', capabilities: new Set(['insert', 'find']), maxLoad: 0.75 };

describe('gpuhash-bench end to end (2^12 slots, 2 reps)', () => {
  it('runs every workload on linear-probe, all correct, and writes JSON, markdown and SVG', async () => {
    const json = join(dir, 'run.json');
    const svg = join(dir, 'svg');
    const { status, out, err } = await run(['--json', json, '--markdown', join(dir, 'run.md'), '--svg', svg]);
    expect(err).toMatch(/\[1\/\d+\] rooflines/);
    expect(status, out + err).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as BenchReport;
    expect(validateReport(report)).toEqual([]);
    expect(report).toMatchObject({
      schemaVersion: 1,
      suite: 'quick',
      capacity: 4096,
      reps: 2,
      git: { revision: 'test-rev', dirty: null },
      ok: true,
    });
    expect(report.device.driver).not.toBe('');
    expect(report.device.limits.maxStorageBufferBindingSize).toBeGreaterThan(0);
    for (const r of report.results) {
      expect(r.ok, `${r.workload} @ ${r.load}: ${r.note}`).toBe(true);
      expect(r.gpuMs?.n).toBe(2);
      expect(r.gops).toBeGreaterThan(0);
    }
    const workloads = new Set(report.results.map((r) => r.workload));
    expect([...workloads]).toEqual([
      'build',
      'find-hit',
      'find-miss',
      'erase-find',
      'mixed-hive',
      'mixed-slab-u100',
      'mixed-slab-u40',
      'mixed-slab-u20',
      'incremental',
      'alloc',
    ]);
    // The quick suite's loads; the full suite's others are listed as skipped (as are workloads a
    // table lacks the capability for, such as mixed batches on horton, and loads past a table's maxLoad).
    expect(report.results.filter((r) => r.workload === 'build' && r.table === 'linear-probe').map((r) => r.load)).toEqual([0.5, 0.9]);
    for (const s of report.skipped.filter((s) => s.table !== '*')) expect(s.note).toMatch(/does not support|is benchmarked up to load/);
    expect(report.skipped.filter((s) => s.table === '*')).toEqual([
      { table: '*', workload: '*', load: 0.75, note: 'not in the quick suite (--loads sets the loads)' },
      { table: '*', workload: '*', load: 0.95, note: 'not in the quick suite (--loads sets the loads)' },
    ]);
    // The allocator workload runs on the tables that have one (SlabHash's) and is skipped, with a note, on the others.
    expect(report.skipped.filter((s) => s.workload === 'alloc').length).toBeGreaterThan(0);
    expect(report.results.some((r) => r.workload === 'alloc' && r.table === 'slab')).toBe(true);
    expect(out).toContain('load 0.75: not in the quick suite');
    expect(report.results.find((r) => r.workload === 'find-hit')?.e2eMs?.n).toBe(2);
    // End-to-end rows carry their bytes each way and their share of the host link's floor, which
    // the run measured: floor = up / upload rate + down / download rate.
    const link = report.roofline.hostLink;
    expect(link?.upload.gbPerSecond).toBeGreaterThan(0);
    expect(link?.download.gbPerSecond).toBeGreaterThan(0);
    for (const r of report.results.filter((x) => x.e2eMs !== undefined)) {
      const per = r.workload === 'build' ? { up: 8, down: 0 } : { up: 4, down: 5 };
      expect(r.e2eBytes).toEqual({ up: per.up * r.ops, down: per.down * r.ops });
      const floorMs =
        (per.up * r.ops) / ((link?.upload.gbPerSecond ?? 0) * 1e6) + (per.down * r.ops) / ((link?.download.gbPerSecond ?? 0) * 1e6);
      expect(r.e2eShareOfFloor).toBeCloseTo(floorMs / (r.e2eMs?.median ?? 0), 6);
      expect(r.e2eGops).toBeCloseTo(r.ops / ((r.e2eMs?.median ?? 0) * 1e6), 9);
    }
    expect(report.roofline.gather4.opsPerSecond).toBeGreaterThan(0);
    expect(out).toContain('all');
    expect(readFileSync(join(dir, 'run.md'), 'utf8')).toContain('## mixed-hive');
    for (const file of readdirSync(svg)) expect(checkXml(readFileSync(join(svg, file), 'utf8')).problems).toEqual([]);
    expect(readdirSync(svg).sort()).toEqual(['incremental.svg', 'mixed.svg', 'throughput-vs-load.svg']);
    // Every table in the registry, every workload: minutes on a 2-core machine's software driver.
  }, 240_000);

  it('checks Zipf find-hit queries, and compares with the run before', async () => {
    const { status, out, err } = await run([
      '--workload',
      'build,find-hit',
      '--loads',
      '0.5,0.9',
      '--zipf',
      '0.99',
      '--no-e2e',
      '--compare',
      join(dir, 'run.json'),
    ]);
    expect(status, out + err).toBe(0);
    expect(out).toMatch(/compared with .*run\.json/);
    expect(out).toMatch(/linear-probe\s+find-hit\s+0\.50\s+find\s+\S+\s+\S+\s+\S+x/);
  });

  it('splits key streams past one buffer into chunks: builds, finds and mixed batches stay correct', async () => {
    // 2^9 keys a buffer: 2048 and 3686 keys (loads 0.5 and 0.9 of 2^12 slots) take 4 and 8 chunks.
    const json = join(dir, 'chunks.json');
    const workloads = 'build,find-hit,find-miss,incremental,mixed,erase-find';
    const argv = ['--workload', workloads, '--table', 'linear-probe,hive', '--key-chunk-log2', '9', '--no-e2e', '--json', json];
    const { status, out, err } = await run(argv);
    const report = JSON.parse(readFileSync(json, 'utf8')) as BenchReport;
    const failed = report.results.filter((r) => !r.ok);
    // erase-find takes its keys in one buffer: refused with a note, and the run fails for it alone.
    expect(failed.length, out + err).toBeGreaterThan(0);
    for (const r of failed) {
      expect(r.workload).toBe('erase-find');
      expect(r.note).toMatch(/in one buffer, but a key buffer holds 512/);
    }
    expect(status).toBe(1);
    const rows = report.results.filter((r) => r.ok);
    for (const table of ['linear-probe', 'hive'])
      for (const w of ['build', 'find-hit', 'find-miss'])
        for (const load of [0.5, 0.9])
          expect(rows.find((r) => r.table === table && r.workload === w && r.load === load)?.ops, `${table} ${w} ${load}`).toBe(
            Math.round(load * 4096),
          );
    expect(rows.some((r) => r.workload.startsWith('mixed'))).toBe(true);
    expect(rows.some((r) => r.workload === 'incremental')).toBe(true);
  });

  it('fails the run on wrong answers and skips what a table cannot do', async () => {
    const { status, out } = await run(
      ['--workload', 'build,find-hit,erase-find,mixed-hive', '--loads', '0.5,0.9', '--no-e2e'],
      [wrongValues, insertFindOnly],
    );
    expect(status).toBe(1);
    expect(out).toMatch(/FAILED:\n {2}wrong-values find-hit @ 0.50 find: \d+ of 2048 find answers wrong/);
    expect(out).toMatch(/insert-find-only erase-find: insert-find-only does not support erase/);
    expect(out).toMatch(/insert-find-only mixed-hive: insert-find-only does not support mixed/);
    expect(out).toMatch(/insert-find-only at load 0.9: insert-find-only is benchmarked up to load 0.75/);
    expect(out).toMatch(/insert-find-only\s+build\s+0\.50\s+insert.*ok/);
  });
});
