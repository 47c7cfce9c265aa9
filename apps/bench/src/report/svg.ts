import type { BenchReport, ResultRow } from '../results';
import { sig3 } from './format';

/** A line of a chart: points (x, y), drawn in order of x. */
export interface Series {
  name: string;
  points: Array<[number, number]>;
}

export interface Bar {
  name: string;
  value: number;
}

const WIDTH = 880;
const HEIGHT = 440;
const MARGIN = { left: 80, right: 280, top: 56, bottom: 50 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

/** Escapes text for XML content and attribute values. */
export function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** A tick label: at most three significant digits, no trailing zeros ('0.0004', '0.25', '12'). */
export function tickText(t: number): string {
  return t === 0 ? '0' : String(Number(t.toPrecision(3)));
}

/** Round tick values covering [0, max]. */
export function niceTicks(max: number, target = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / target;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const ticks: number[] = [];
  for (let t = 0; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  if ((ticks[ticks.length - 1] ?? 0) < max) ticks.push(Number((ticks.length * step).toPrecision(12)));
  return ticks;
}

function frame(title: string, subtitle: string, body: string[]): string {
  const sub = subtitle.length > 120 ? `${subtitle.slice(0, 117)}...` : subtitle;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>${xmlEscape(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="15" font-weight="600">${xmlEscape(title)}</text>`,
    `<text x="${WIDTH / 2}" y="40" text-anchor="middle" font-size="11" fill="#555">${xmlEscape(sub)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

/** Grid lines, tick labels and the label of the y axis; returns the value-to-pixel scale. */
function yAxis(yMax: number, yLabel: string): { scale: (y: number) => number; parts: string[] } {
  const ticks = niceTicks(yMax);
  const top = ticks[ticks.length - 1] ?? 1;
  const scale = (y: number) => MARGIN.top + PLOT_H - (y / top) * PLOT_H;
  const parts = ticks.map((t) => {
    const y = scale(t).toFixed(1);
    return `<line x1="${MARGIN.left}" x2="${MARGIN.left + PLOT_W}" y1="${y}" y2="${y}" stroke="#e5e5e5"/><text x="${MARGIN.left - 8}" y="${(scale(t) + 4).toFixed(1)}" text-anchor="end">${tickText(t)}</text>`;
  });
  const midY = MARGIN.top + PLOT_H / 2;
  parts.push(`<text x="16" y="${midY}" text-anchor="middle" transform="rotate(-90 16 ${midY})">${xmlEscape(yLabel)}</text>`);
  parts.push(
    `<line x1="${MARGIN.left}" x2="${MARGIN.left + PLOT_W}" y1="${MARGIN.top + PLOT_H}" y2="${MARGIN.top + PLOT_H}" stroke="#333"/>`,
  );
  parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + PLOT_H}" stroke="#333"/>`);
  return { scale, parts };
}

function legend(names: string[], marker: (i: number, x: number, y: number) => string): string[] {
  const x = WIDTH - MARGIN.right + 16;
  return names.map((name, i) => {
    const y = MARGIN.top + 10 + i * 20;
    return `${marker(i, x, y)}<text x="${x + 26}" y="${y + 4}">${xmlEscape(name)}</text>`;
  });
}

function color(i: number): string {
  return COLORS[i % COLORS.length] as string;
}

/** A line chart with markers and a legend (hand-written SVG, no dependencies). */
export function lineChart(
  title: string,
  subtitle: string,
  xLabel: string,
  yLabel: string,
  series: Series[],
  xDomain: [number, number],
): string {
  const yMax = Math.max(0, ...series.flatMap((s) => s.points.map((p) => p[1])));
  const { scale: sy, parts } = yAxis(yMax, yLabel);
  const [x0, x1] = xDomain[1] > xDomain[0] ? xDomain : [xDomain[0] - 0.5, xDomain[0] + 0.5];
  const sx = (x: number) => MARGIN.left + ((x - x0) / (x1 - x0)) * PLOT_W;
  const body = [...parts];
  for (const t of niceTicks(x1 - x0)) {
    if (t > x1 - x0 + 1e-9) continue;
    body.push(`<text x="${sx(x0 + t).toFixed(1)}" y="${MARGIN.top + PLOT_H + 18}" text-anchor="middle">${tickText(x0 + t)}</text>`);
  }
  body.push(`<text x="${MARGIN.left + PLOT_W / 2}" y="${HEIGHT - 12}" text-anchor="middle">${xmlEscape(xLabel)}</text>`);
  series.forEach((s, i) => {
    const points = [...s.points].sort((a, b) => a[0] - b[0]);
    body.push(
      `<polyline fill="none" stroke="${color(i)}" stroke-width="2" points="${points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const [x, y] of points) {
      const tip = xmlEscape(`${s.name}: ${sig3(y)} at ${sig3(x)}`);
      body.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${color(i)}"><title>${tip}</title></circle>`);
    }
  });
  body.push(
    ...legend(
      series.map((s) => s.name),
      (i, x, y) => `<line x1="${x}" x2="${x + 20}" y1="${y}" y2="${y}" stroke="${color(i)}" stroke-width="3"/>`,
    ),
  );
  return frame(title, subtitle, body);
}

/** A grouped bar chart: one group per label, one bar (and legend entry) per name in it. */
export function barChart(title: string, subtitle: string, yLabel: string, groups: Array<{ label: string; bars: Bar[] }>): string {
  const names = [...new Set(groups.flatMap((g) => g.bars.map((b) => b.name)))];
  const yMax = Math.max(0, ...groups.flatMap((g) => g.bars.map((b) => b.value)));
  const { scale: sy, parts } = yAxis(yMax, yLabel);
  const body = [...parts];
  const groupW = PLOT_W / Math.max(1, groups.length);
  const barW = Math.max(2, (groupW * 0.8) / Math.max(1, names.length));
  groups.forEach((g, gi) => {
    const gx = MARGIN.left + gi * groupW + groupW * 0.1;
    for (const b of g.bars) {
      const i = names.indexOf(b.name);
      const y = sy(b.value);
      const tip = xmlEscape(`${g.label}, ${b.name}: ${sig3(b.value)}`);
      body.push(
        `<rect x="${(gx + i * barW).toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 1).toFixed(1)}" height="${(MARGIN.top + PLOT_H - y).toFixed(1)}" fill="${color(i)}"><title>${tip}</title></rect>`,
      );
    }
    body.push(
      `<text x="${(MARGIN.left + gi * groupW + groupW / 2).toFixed(1)}" y="${MARGIN.top + PLOT_H + 18}" text-anchor="middle">${xmlEscape(g.label)}</text>`,
    );
  });
  body.push(...legend(names, (i, x, y) => `<rect x="${x}" y="${y - 6}" width="20" height="12" fill="${color(i)}"/>`));
  return frame(title, subtitle, body);
}

const LOAD_WORKLOADS = ['build', 'find-hit', 'find-miss', 'erase-find'];

/** The charts of a report, by file name: throughput vs load, incremental inserts, mixed batches. */
export function reportCharts(report: BenchReport): Map<string, string> {
  const charts = new Map<string, string>();
  const measured = report.results.filter((r) => r.ok && r.gops !== null);
  const subtitle = `${report.device.description.split(',')[0] ?? ''}; 2^${Math.log2(report.capacity)} slots; median of ${report.reps} reps; ${report.date.slice(0, 10)}`;

  const bulk = measured.filter((r) => LOAD_WORKLOADS.includes(r.workload));
  if (bulk.length > 0) {
    // One line per table, workload and operation (the operation named where a workload has several).
    const multiOp = (r: ResultRow) =>
      new Set(bulk.filter((x) => x.workload === r.workload && x.table === r.table).map((x) => x.operation)).size > 1;
    const series = new Map<string, Series>();
    for (const r of bulk) {
      const name = `${r.table} ${r.workload}${multiOp(r) ? ` (${r.operation})` : ''}`;
      const s = series.get(name) ?? { name, points: [] };
      s.points.push([r.load, r.gops as number]);
      series.set(name, s);
    }
    const loads = bulk.map((r) => r.load);
    charts.set(
      'throughput-vs-load.svg',
      lineChart(
        'Throughput vs load factor',
        subtitle,
        'load factor',
        'G ops/s',
        [...series.values()],
        [Math.min(0.5, ...loads), Math.max(...loads)],
      ),
    );
  }

  const inc = measured.filter((r) => r.workload === 'incremental');
  if (inc.length > 0) {
    const series = new Map<string, Series>();
    for (const r of inc) {
      const s = series.get(r.table) ?? { name: `${r.table} insert`, points: [] };
      s.points.push([(r.load + (r.loadTo ?? r.load)) / 2, r.gops as number]);
      series.set(r.table, s);
    }
    const top = Math.max(...inc.map((r) => r.loadTo ?? r.load));
    charts.set(
      'incremental.svg',
      lineChart(
        'Incremental insert batches vs load factor',
        subtitle,
        'load factor when the batch ran',
        'G inserts/s',
        [...series.values()],
        [0, top],
      ),
    );
  }

  const mixed = measured.filter((r) => r.workload.startsWith('mixed'));
  if (mixed.length > 0) {
    // One group per workload, one bar per table and initial load factor.
    const groups = new Map<string, { label: string; bars: Bar[] }>();
    for (const r of mixed) {
      const g = groups.get(r.workload) ?? { label: r.workload, bars: [] };
      g.bars.push({ name: `${r.table} at load ${r.load}`, value: r.gops as number });
      groups.set(r.workload, g);
    }
    charts.set('mixed.svg', barChart('Mixed batches by initial load factor', subtitle, 'G ops/s', [...groups.values()]));
  }
  return charts;
}
