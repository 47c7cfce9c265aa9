import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chartsByOperation, collectRuns, normalizeRun } from '../lib/bench/schema';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/bench-run.json', import.meta.url), 'utf8')) as unknown;

describe('benchmark results', () => {
  it('reads a results file: device, driver, date, roofline, and every row with a rate', () => {
    const run = normalizeRun('h200.json', fixture);
    if ('reason' in run) throw new Error(run.reason);
    expect(run.device.description).toBe('NVIDIA H200');
    expect(run.device.details).toContainEqual(['driver', 'Vulkan 1.3, NVIDIA 570.86']);
    expect(run).toMatchObject({ date: '2025-11-20T10:00:00Z', git: 'abc1234', suite: 'quick', capacity: 2 ** 27, rooflineGops: 40.1 });
    expect(run.rows).toHaveLength(8); // the row without gops is dropped
    expect(run.rows.find((r) => r.operation === 'mixed 0.5:0.3:0.2')?.load).toBeNull();
  });

  it('charts throughput against load per operation, leaving out failed runs and rows without a load', () => {
    const run = normalizeRun('h200.json', fixture);
    if ('reason' in run) throw new Error(run.reason);
    const charts = chartsByOperation(run.rows);
    expect(charts.map((c) => c.operation)).toEqual(['insert', 'find-hit', 'find-miss']);
    expect(charts[0]?.series).toEqual([
      {
        label: 'linear-probe',
        points: [
          { load: 0.5, gops: 8.3 },
          { load: 0.9, gops: 5.2 },
        ],
      },
    ]);
  });

  it('skips unreadable files with a reason and orders runs newest first', () => {
    const older = { ...(fixture as object), date: '2025-01-01' };
    const data = collectRuns([
      { file: 'old.json', json: older },
      { file: 'new.json', json: fixture },
      { file: 'bad.json', json: [1, 2] },
      { file: 'torn.json', error: 'unreadable: Unexpected end of JSON input' },
    ]);
    expect(data.runs.map((r) => r.file)).toEqual(['new.json', 'old.json']);
    expect(data.skipped).toEqual([
      { file: 'bad.json', reason: 'not a JSON object' },
      { file: 'torn.json', reason: 'unreadable: Unexpected end of JSON input' },
    ]);
  });

  it('accepts a bare device string and a numeric roofline', () => {
    const run = normalizeRun('x.json', { device: 'SwiftShader', roofline: 0.4, results: [] });
    expect(run).toMatchObject({ device: { description: 'SwiftShader', details: [] }, rooflineGops: 0.4, rows: [] });
  });
});
