import type { BenchReport } from '../results';
import {
  count,
  loadText,
  percent,
  RESULT_ALIGN,
  rateIn,
  rateUnit,
  reportRateUnit,
  resultCells,
  resultHeaders,
  SOFTWARE_NOTE,
  sig3,
  skipText,
  textTable,
} from './format';

/** The run's settings, device and rooflines: printed before and after the results. */
export function headerLines(report: BenchReport): string[] {
  const r = report.roofline;
  const u = rateUnit([r.gather4.opsPerSecond, r.gather128.opsPerSecond]);
  const keys = report.keys.distribution === 'zipf' ? `find-hit keys Zipf(${report.keys.zipfExponent})` : 'keys uniform';
  return [
    `gpuhash-bench ${report.suite}: 2^${Math.log2(report.capacity)} slots, ${report.reps} reps after ${report.warmup} warm-up${report.warmupMs > 0 ? ` (at least ${report.warmupMs} ms)` : ''}, ${keys}, revision ${report.git.revision.slice(0, 12)}${report.git.dirty ? ' (dirty)' : ''}`,
    `device: ${report.device.description}`,
    `driver: ${report.device.driver || 'unknown'}`,
    `rooflines (${count(r.bufferBytes / 2 ** 20)} MiB buffers): random 4-byte gather ${rateIn(r.gather4.opsPerSecond, u)} ${u.prefix}/s (${sig3(r.gather4.gbPerSecond)} GB/s, spread ${percent(r.gather4.gpuMs.spread)}); ` +
      `random 128-byte line gather ${rateIn(r.gather128.opsPerSecond, u)} ${u.prefix} lines/s (${sig3(r.gather128.gbPerSecond)} GB/s); sequential copy ${sig3(r.copy.gbPerSecond)} GB/s (read + write)`,
    ...(r.hostLink
      ? [
          `host link (${count(r.hostLink.upload.bytes / 2 ** 20)} MiB): upload (staged) ${sig3(r.hostLink.upload.gbPerSecond)} GB/s; download (mapAsync and copy out) ${sig3(r.hostLink.download.gbPerSecond)} GB/s`,
        ]
      : []),
  ];
}

/** The readable end-of-run summary: header, one table of every result, failures and skips. */
export function formatTerminal(report: BenchReport): string {
  const out = [...headerLines(report), ''];
  const unit = reportRateUnit(report);
  out.push(
    textTable(
      resultHeaders(unit),
      report.results.map((row) => resultCells(row, unit)),
      RESULT_ALIGN,
    ),
  );
  out.push(
    '',
    `"GPU ms" is the median over the reps of timestamped passes; "spread" (max - min) / median; "of gather" ${unit.prefix} ops/s as a share of the random 4-byte gather rate.`,
  );
  if (report.device.isSoftware) out.push(SOFTWARE_NOTE);
  const failures = report.results.filter((r) => !r.ok);
  if (failures.length > 0) {
    out.push('', 'FAILED:');
    for (const f of failures) out.push(`  ${f.table} ${f.workload} @ ${loadText(f)} ${f.operation}: ${f.note ?? 'failed'}`);
  }
  if (report.skipped.length > 0) {
    out.push('', 'skipped:');
    for (const s of report.skipped) out.push(`  ${skipText(s)}`);
  }
  const verdict = report.ok
    ? `all ${report.results.length} results correct`
    : `${failures.length} of ${report.results.length} results FAILED`;
  out.push('', `${verdict}; ${report.seconds.toFixed(1)} s`);
  return out.join('\n');
}
