import type { BenchReport, ResultRow } from '../results';
import { count, loadText, percent, type RateUnit, rateIn, rateUnit, reportRateUnit, SOFTWARE_NOTE, sig3, skipText } from './format';

function table(headers: string[], rows: string[][], align: Array<'l' | 'r'>): string {
  const escapePipes = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${headers.join(' | ')} |`,
    `|${align.map((a) => (a === 'r' ? '---:' : ':---')).join('|')}|`,
    ...rows.map((r) => `| ${r.map(escapePipes).join(' | ')} |`),
  ].join('\n');
}

function rowCells(r: ResultRow, unit: RateUnit): string[] {
  return [
    r.table,
    loadText(r),
    r.operation,
    count(r.ops),
    sig3(r.gpuMs?.median),
    percent(r.gpuMs?.spread),
    rateIn(r.gops === null ? null : r.gops * 1e9, unit),
    percent(r.shareOfGather),
    sig3(r.e2eMs?.median),
    percent(r.e2eShareOfFloor),
    r.ok ? 'ok' : `**FAIL**: ${r.note ?? ''}`,
  ];
}

/** The results as markdown: settings, rooflines, then one table per workload. */
export function formatMarkdown(report: BenchReport): string {
  const d = report.device;
  const r = report.roofline;
  const unit = reportRateUnit(report);
  const roofUnit = rateUnit([r.gather4.opsPerSecond, r.gather128.opsPerSecond, r.copy.opsPerSecond]);
  const out: string[] = [
    `# gpuhash-bench: ${report.suite} suite`,
    '',
    `- date: ${report.date}`,
    `- revision: \`${report.git.revision}\`${report.git.dirty ? ' (uncommitted changes)' : ''}`,
    `- device: ${d.description}`,
    `- driver: ${d.driver || 'unknown'}; subgroups ${d.subgroups ? `${d.subgroupMinSize}-${d.subgroupMaxSize}` : 'no'}`,
    `- table capacity: 2^${Math.log2(report.capacity)} slots; ${report.reps} timed reps after ${report.warmup} warm-up, back to back in one submission`,
    `- keys: fmix32(2j+1), misses fmix32(2j+2)${report.keys.distribution === 'zipf' ? `, find-hit queries Zipf(${report.keys.zipfExponent})` : ''}`,
    ...(d.isSoftware ? ['', `> ${SOFTWARE_NOTE}`] : []),
    '',
    '## Memory rooflines',
    '',
    table(
      ['kernel', 'ops', 'GPU ms', 'spread', `${roofUnit.prefix} ops/s`.trimStart(), 'GB/s'],
      [
        ['random 4-byte gather', r.gather4],
        ['random 128-byte line gather', r.gather128],
        ['sequential copy (16-byte vectors, read + write)', r.copy],
      ].map(([name, k]) => {
        const x = k as typeof r.gather4;
        return [
          name as string,
          count(x.ops),
          sig3(x.gpuMs.median),
          percent(x.gpuMs.spread),
          rateIn(x.opsPerSecond, roofUnit),
          sig3(x.gbPerSecond),
        ];
      }),
      ['l', 'r', 'r', 'r', 'r', 'r'],
    ),
  ];
  if (r.hostLink) {
    const l = r.hostLink;
    out.push(
      '',
      `Host link (${count(l.upload.bytes / 2 ** 20)} MiB each way, wall clock): upload through mapped staging buffers ${sig3(l.upload.gbPerSecond)} GB/s; download by a copy, \`mapAsync\` and the copy out ${sig3(l.download.gbPerSecond)} GB/s.`,
    );
  }
  const workloads = [...new Set(report.results.map((x) => x.workload))];
  for (const w of workloads) {
    const rows = report.results.filter((x) => x.workload === w);
    out.push('', `## ${w}`, '');
    out.push(
      table(
        ['table', 'load', 'op', 'ops', 'GPU ms', 'spread', `${unit.prefix} ops/s`.trimStart(), 'of gather', 'e2e ms', 'e2e of link', 'ok'],
        rows.map((x) => rowCells(x, unit)),
        ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
      ),
    );
    const notes = [...new Set(rows.filter((x) => x.ok && x.note).map((x) => x.note as string))];
    if (notes.length > 0 && notes.length <= 3) out.push('', ...notes.map((n) => `- ${n}`));
  }
  if (report.skipped.length > 0) {
    out.push('', '## Skipped', '');
    for (const s of report.skipped) out.push(`- ${skipText(s)}`);
  }
  out.push(
    '',
    "GPU ms: median of the timed repetitions (timestamp queries); spread: (max - min) / median; of gather: throughput as a share of the random 4-byte gather rate; e2e ms: host arrays to the device and back through the table's host API; e2e of link: the time the host link needs for the bytes that run moves each way (the host-link roofline) over its e2e time.",
    '',
  );
  return out.join('\n');
}
