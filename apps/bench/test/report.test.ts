import { describe, expect, it } from 'vitest';
import { count, percent, rateIn, rateUnit, reportRateUnit, SOFTWARE_NOTE, sig3, skipText, textTable } from '../src/report/format';
import { formatMarkdown } from '../src/report/markdown';
import { reportCharts, reportSpecs } from '../src/report/svg';
import { formatTerminal } from '../src/report/terminal';
import { validateReport } from '../src/results';
import { sampleReport } from './fixtures';
import { checkXml } from './xml';

describe('formatting', () => {
  it('prints numbers readably', () => {
    expect(sig3(12.345)).toBe('12.3');
    expect(sig3(0.0012345)).toBe('0.00123');
    expect(sig3(1234.5)).toBe('1235');
    expect(sig3(null)).toBe('-');
    expect(percent(0.4567)).toBe('46%');
    expect(percent(0.01234)).toBe('1.23%');
    expect(percent(1e-9)).toBe('<0.1%');
    expect(count(65536)).toBe('65.5k');
    expect(count(127_506_841)).toBe('128M');
    expect(count(512)).toBe('512');
  });

  it('picks the rate unit the fastest figure reads at least 1 in', () => {
    expect(rateUnit([2.5e9, 4e8]).prefix).toBe('G');
    expect(rateUnit([1.2e6, 3e5]).prefix).toBe('M');
    expect(rateUnit([999_999]).prefix).toBe('k');
    expect(rateUnit([12]).prefix).toBe('');
    expect(rateUnit([null, undefined, Number.NaN]).prefix).toBe('G');
    expect(rateIn(1.234e6, rateUnit([1.234e6]))).toBe('1.23');
    expect(rateIn(4e5, rateUnit([1.234e6]))).toBe('0.400');
    expect(rateIn(null, rateUnit([1]))).toBe('-');
  });

  it('names skips readably', () => {
    expect(skipText({ table: 'hive', workload: 'hkv-zipf', note: 'no cache' })).toBe('hive hkv-zipf: no cache');
    expect(skipText({ table: 'hive', workload: '*', load: 0.95, note: 'up to 0.9' })).toBe('hive at load 0.95: up to 0.9');
    expect(skipText({ table: '*', workload: '*', load: 0.75, note: 'not in the quick suite' })).toBe('load 0.75: not in the quick suite');
  });

  it('aligns text tables', () => {
    const t = textTable(
      ['a', 'bb'],
      [
        ['xxx', '1'],
        ['y', '22'],
      ],
      ['l', 'r'],
    ).split('\n');
    expect(t).toEqual(['a    bb', '---  --', 'xxx   1', 'y    22']);
  });
});

describe('terminal and markdown output', () => {
  it('prints every result, the rooflines and the verdict', () => {
    const report = sampleReport();
    const text = formatTerminal(report);
    expect(text).toContain('random 4-byte gather');
    expect(text).toContain('0.90-0.95');
    expect(text.split('\n').filter((l) => l.startsWith('linear-probe')).length).toBe(report.results.length);
    expect(text).toContain(`all ${report.results.length} results correct`);
    expect(text).toContain('hkv-zipf: linear-probe does not support cache');
  });

  it('prints a software adapter in M ops/s, with a note that it says nothing about GPU speed', () => {
    const gpu = sampleReport();
    expect(reportRateUnit(gpu).prefix).toBe('G');
    expect(formatTerminal(gpu)).toContain(' G ops/s ');
    expect(formatTerminal(gpu)).not.toContain(SOFTWARE_NOTE);

    const cpu = sampleReport(0.001);
    cpu.device.isSoftware = true;
    const text = formatTerminal(cpu);
    expect(text).toContain(' M ops/s ');
    expect(text).toMatch(/build\s+0\.50\s+insert\s+32\.8k\s+\S+\s+\S+\s+0\.600\s/);
    expect(text).toContain(SOFTWARE_NOTE);
    expect(formatMarkdown(cpu)).toContain('| M ops/s |');
    expect(formatMarkdown(cpu)).toContain(SOFTWARE_NOTE);
  });

  it('lists failures with their notes', () => {
    const report = sampleReport();
    report.results[1] = {
      ...(report.results[1] as (typeof report.results)[number]),
      ok: false,
      note: '3 of 32768 find answers wrong (first at index 7)',
    };
    report.ok = false;
    const text = formatTerminal(report);
    expect(text).toMatch(/FAILED:\n {2}linear-probe find-hit @ 0.50 find: 3 of 32768/);
    expect(text).toContain('1 of');
  });

  it('writes one markdown table per workload', () => {
    const md = formatMarkdown(sampleReport());
    for (const w of ['build', 'find-hit', 'erase-find', 'mixed-hive', 'mixed-slab-u100', 'incremental'])
      expect(md).toContain(`\n## ${w}\n`);
    expect(md).toContain('| table | load | op | ops | GPU ms | spread | G ops/s | of gather | e2e ms | e2e of link | ok |');
    expect(md).toContain('- batch 2048: 1024 insert');
    // Every table row has as many cells as its header.
    for (const block of md.split('\n\n').filter((b) => b.startsWith('|'))) {
      const widths = block.split('\n').map((l) => l.split(/(?<!\\)\|/).length);
      expect(new Set(widths).size).toBe(1);
    }
  });

  it('accepts its own report as schema-valid and rejects broken ones', () => {
    expect(validateReport(sampleReport())).toEqual([]);
    expect(validateReport({ ...sampleReport(), schemaVersion: 2 })[0]).toMatch(/schemaVersion/);
    expect(validateReport(null)).toEqual(['not an object']);
    const broken = sampleReport() as unknown as { results: Array<Record<string, unknown>> };
    (broken.results[0] as Record<string, unknown>).ok = 'yes';
    expect(validateReport(broken)).toContain('results[0].ok is not a boolean');
  });
});

describe('SVG charts (Vega-Lite)', () => {
  it('writes well-formed charts for load, incremental and mixed results', async () => {
    const charts = await reportCharts(sampleReport());
    expect([...charts.keys()].sort()).toEqual(['incremental.svg', 'mixed.svg', 'throughput-vs-load.svg']);
    for (const [name, svg] of charts) {
      const { problems, elements } = checkXml(svg);
      expect(problems, name).toEqual([]);
      expect(elements[0]).toBe('svg');
      // The device name has XML specials: they must arrive escaped.
      expect(svg).toContain('Test GPU &lt;fake&gt; &amp; co');
      expect(svg).toContain('G ');
    }
    const load = charts.get('throughput-vs-load.svg') as string;
    for (const series of [
      'linear-probe build',
      'linear-probe find-hit',
      'linear-probe erase-find (erase)',
      'linear-probe erase-find (find)',
    ])
      expect(load).toContain(`>${series}<`);
    const mixed = charts.get('mixed.svg') as string;
    expect(mixed).toContain('>linear-probe at load 0.95<');
  });

  it('draws one line per series and one bar per mixed result', () => {
    const specs = reportSpecs(sampleReport());
    const values = (name: string) => (specs.get(name) as { data: { values: unknown[] } }).data.values as Array<Record<string, unknown>>;
    const lines = values('throughput-vs-load.svg');
    expect(new Set(lines.map((p) => p.series)).size).toBe(4);
    expect(lines.length).toBe(16);
    // Two mixed workloads x four loads: eight bars.
    expect(values('mixed.svg').length).toBe(8);
    expect(values('incremental.svg').length).toBe(19);
  });

  it('labels software runs in their unit, with a caveat', async () => {
    const cpu = sampleReport(0.001);
    cpu.device.isSoftware = true;
    const svg = (await reportCharts(cpu)).get('throughput-vs-load.svg') as string;
    expect(svg).toContain('>M ops/s<');
    expect(svg).toContain('these figures say nothing about GPU speed');
  });

  it('draws nothing without results', async () => {
    expect((await reportCharts({ ...sampleReport(), results: [] })).size).toBe(0);
  });

  it('the XML checker catches broken documents', () => {
    expect(checkXml('<svg><g></svg>').problems.length).toBeGreaterThan(0);
    expect(checkXml('<svg><text>a & b</text></svg>').problems).toContain('stray & at 13');
    expect(checkXml('<svg x=1></svg>').problems.length).toBeGreaterThan(0);
    expect(checkXml('<svg/><svg/>').problems).toContain('2 root elements');
  });
});
