import { describe, expect, it } from 'vitest';
import { compareReports, formatComparison } from '../src/report/compare';
import { sampleReport } from './fixtures';

describe('--compare', () => {
  it('matches results and prints new / old throughput ratios', () => {
    const old = sampleReport(1);
    const current = sampleReport(2);
    const c = compareReports(old, current);
    expect(c.rows.length).toBe(current.results.length);
    for (const r of c.rows) expect(r.ratio).toBeCloseTo(2, 9);
    expect(c.notes).toEqual([]);
    const text = formatComparison(c, 'old.json');
    expect(text).toContain('compared with old.json');
    expect(text).toMatch(/linear-probe\s+build\s+0\.50\s+insert\s+0\.600\s+1\.20\s+2\.00x/);
    expect(text).toMatch(/gather4\s+G reads\/s\s+1\.05\s+1\.05\s+1\.00x/);
    expect(text).toMatch(/copy\s+GB\/s\s+67\.1\s+67\.1\s+1\.00x/);
  });

  it('notes other devices, unmatched rows, and failed results', () => {
    const old = sampleReport();
    old.results = old.results.filter((r) => r.workload !== 'incremental');
    const current = sampleReport();
    current.device = { ...current.device, description: 'Another GPU' };
    current.capacity = 2 ** 27;
    current.results[0] = { ...(current.results[0] as (typeof current.results)[number]), ok: false };
    const c = compareReports(old, current);
    expect(c.notes.join('\n')).toMatch(/devices differ[\s\S]*capacities differ[\s\S]*19 results have no match/);
    expect(c.rows[0]?.ratio).toBeNull();
  });
});
