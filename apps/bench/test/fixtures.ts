import type { BenchReport, ResultRow } from '../src/results';
import { SCHEMA_VERSION } from '../src/results';
import { summarize } from '../src/stats';

function row(workload: string, load: number, operation: string, gops: number, extra: Partial<ResultRow> = {}): ResultRow {
  const ops = Math.round(load * 65536);
  const ms = ops / gops / 1e6;
  return {
    table: 'linear-probe',
    workload,
    load,
    operation,
    ops,
    gpuMs: summarize([ms, ms * 1.1, ms * 0.9]),
    gops,
    shareOfGather: gops / 2,
    ok: true,
    ...extra,
  };
}

/** A small, complete report with every kind of row (no GPU needed). */
export function sampleReport(scale = 1): BenchReport {
  const results: ResultRow[] = [];
  for (const load of [0.5, 0.75, 0.9, 0.95]) {
    results.push(row('build', load, 'insert', 0.8 * scale * (1 - load / 2), { e2eMs: summarize([3, 4, 5]) }));
    results.push(row('find-hit', load, 'find', 1.5 * scale * (1 - load / 2)));
    results.push(row('erase-find', load, 'erase', 1.1 * scale));
    results.push(row('erase-find', load, 'find', 0.9 * scale));
    results.push(row('mixed-hive', load, 'mixed', 0.7 * scale, { note: 'batch 2048: 1024 insert, 410 erase, 614 find-hit, 0 find-miss' }));
    results.push(row('mixed-slab-u100', load, 'mixed', 0.6 * scale));
  }
  for (let bin = 0; bin < 19; bin++)
    results.push(row('incremental', bin * 0.05, 'insert', 1.2 * scale * (1 - bin / 20), { loadTo: (bin + 1) * 0.05 }));
  const stats = summarize([1, 1.1, 0.9]);
  const roof = (ops: number, bytes: number) => ({ ops, bytes, gpuMs: stats, opsPerSecond: ops / 1e-3, gbPerSecond: bytes / 1e-3 / 1e9 });
  return {
    schemaVersion: SCHEMA_VERSION,
    date: '2025-01-01T00:00:00.000Z',
    git: { revision: 'abc123', dirty: false },
    runtime: { node: 'v20.0.0', platform: 'linux', arch: 'x64' },
    device: {
      description: 'Test GPU <fake> & co, subgroups 32-32',
      vendor: 'test',
      architecture: 'x',
      device: 'y',
      driver: 'driver 1.0',
      isSoftware: false,
      subgroups: true,
      subgroupMinSize: 32,
      subgroupMaxSize: 32,
      timestamps: true,
      features: ['timestamp-query'],
      dawnOptions: [],
      limits: { maxBufferSize: 2 ** 31 },
    },
    suite: 'quick',
    capacity: 65536,
    reps: 3,
    warmup: 1,
    warmupMs: 0,
    loads: [0.5, 0.75, 0.9, 0.95],
    keys: { distribution: 'uniform' },
    roofline: { bufferBytes: 2 ** 26, gather4: roof(2 ** 20, 2 ** 22), gather128: roof(2 ** 15, 2 ** 22), copy: roof(2 ** 21, 2 ** 26) },
    results,
    skipped: [{ table: 'linear-probe', workload: 'hkv-zipf', note: 'linear-probe does not support cache' }],
    ok: true,
    seconds: 12.5,
  };
}
