// The SVG charts of a report, drawn by Vega-Lite: each chart is a spec, compiled to Vega and
// rendered to SVG in Node without a browser (Vega's headless view, no canvas needed).
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { BenchReport, ResultRow } from '../results';
import { type RateUnit, reportRateUnit } from './format';

/** One point of a line: the series it belongs to, x and y. */
export interface LinePoint {
  series: string;
  x: number;
  y: number;
}

/** One bar of a grouped bar chart: its group (x), its name within the group (colour) and value. */
export interface BarDatum {
  group: string;
  name: string;
  value: number;
}

const WIDTH = 560;
const HEIGHT = 320;

// Legends show whole series names ('linear-probe-atomic erase-find (find)'), not Vega's 160-pixel cut.
const CONFIG = { legend: { labelLimit: 0 }, title: { subtitleColor: '#555' } };

function titled(title: string, subtitle: string[]) {
  // Long lines would widen the whole chart: cut them as the hand-drawn charts did.
  return { text: title, subtitle: subtitle.map((l) => (l.length > 100 ? `${l.slice(0, 97)}...` : l)), anchor: 'middle' as const };
}

/** Renders a Vega-Lite spec to an SVG document. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none', logLevel: 0 });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}

/** A line chart with a point at every measurement, one colour per series. */
export function lineSpec(
  title: string,
  subtitle: string[],
  xLabel: string,
  yLabel: string,
  points: LinePoint[],
  xDomain: [number, number],
): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: titled(title, subtitle),
    width: WIDTH,
    height: HEIGHT,
    background: 'white',
    config: CONFIG,
    data: { values: points },
    mark: { type: 'line', point: true, tooltip: true },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: xLabel, scale: { domain: xDomain, nice: false, zero: false } },
      y: { field: 'y', type: 'quantitative', title: yLabel },
      color: { field: 'series', type: 'nominal', title: null, sort: null },
      order: { field: 'x', type: 'quantitative' },
    },
  };
}

/** A grouped bar chart: one group per label along x, one coloured bar per name within it. */
export function barSpec(title: string, subtitle: string[], yLabel: string, bars: BarDatum[]): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: titled(title, subtitle),
    width: WIDTH,
    height: HEIGHT,
    background: 'white',
    config: CONFIG,
    data: { values: bars },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      x: { field: 'group', type: 'nominal', title: null, sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'name', type: 'nominal', sort: null },
      y: { field: 'value', type: 'quantitative', title: yLabel },
      color: { field: 'name', type: 'nominal', title: null, sort: null },
    },
  };
}

const LOAD_WORKLOADS = ['build', 'find-hit', 'find-miss', 'erase-find'];

/** A row's throughput in the report's unit. */
function rate(r: ResultRow, unit: RateUnit): number {
  return ((r.gops as number) * 1e9) / unit.perSecond;
}

/** The chart specs of a report, by file name: throughput vs load, incremental inserts, mixed batches. */
export function reportSpecs(report: BenchReport): Map<string, TopLevelSpec> {
  const specs = new Map<string, TopLevelSpec>();
  const measured = report.results.filter((r) => r.ok && r.gops !== null);
  const unit = reportRateUnit(report);
  const subtitle = [
    `${report.device.description.split(',')[0] ?? ''}; 2^${Math.log2(report.capacity)} slots; median of ${report.reps} reps; ${report.date.slice(0, 10)}`,
    ...(report.device.isSoftware ? ['software adapter on the CPU: these figures say nothing about GPU speed'] : []),
  ];

  const bulk = measured.filter((r) => LOAD_WORKLOADS.includes(r.workload));
  if (bulk.length > 0) {
    // One line per table, workload and operation (the operation named where a workload has several).
    const multiOp = (r: ResultRow) =>
      new Set(bulk.filter((x) => x.workload === r.workload && x.table === r.table).map((x) => x.operation)).size > 1;
    const points = bulk.map((r) => ({
      series: `${r.table} ${r.workload}${multiOp(r) ? ` (${r.operation})` : ''}`,
      x: r.load,
      y: rate(r, unit),
    }));
    const loads = bulk.map((r) => r.load);
    specs.set(
      'throughput-vs-load.svg',
      lineSpec('Throughput vs load factor', subtitle, 'load factor', `${unit.prefix} ops/s`, points, [
        Math.min(0.5, ...loads),
        Math.max(...loads),
      ]),
    );
  }

  const inc = measured.filter((r) => r.workload === 'incremental');
  if (inc.length > 0) {
    const points = inc.map((r) => ({ series: `${r.table} insert`, x: (r.load + (r.loadTo ?? r.load)) / 2, y: rate(r, unit) }));
    const top = Math.max(...inc.map((r) => r.loadTo ?? r.load));
    specs.set(
      'incremental.svg',
      lineSpec(
        'Incremental insert batches vs load factor',
        subtitle,
        'load factor when the batch ran',
        `${unit.prefix} inserts/s`,
        points,
        [0, top],
      ),
    );
  }

  const mixed = measured.filter((r) => r.workload.startsWith('mixed'));
  if (mixed.length > 0) {
    // One group per workload, one bar per table and initial load factor.
    const bars = mixed.map((r) => ({ group: r.workload, name: `${r.table} at load ${r.load}`, value: rate(r, unit) }));
    specs.set('mixed.svg', barSpec('Mixed batches by initial load factor', subtitle, `${unit.prefix} ops/s`, bars));
  }
  return specs;
}

/** The charts of a report as SVG documents, by file name (the names the docs and results use). */
export async function reportCharts(report: BenchReport): Promise<Map<string, string>> {
  const charts = new Map<string, string>();
  for (const [name, spec] of reportSpecs(report)) charts.set(name, await renderSvg(spec));
  return charts;
}
