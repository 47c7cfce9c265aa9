import { testGpu } from '@gpuhash/testing';
import { expect, it } from 'vitest';
import { formatHkvRows, parseHkvArgs } from '../src/hkv/suite';
import { main } from '../src/main';

it('parses the hkv suite arguments', () => {
  const o = parseHkvArgs(['full', '--dims', '1,64', '--workload', 'throughput']);
  expect(o).not.toBe('help');
  if (o === 'help') return;
  expect(o.capacityLog2).toBe(27);
  expect(o.dims).toEqual([1, 64]);
  expect(o.workloads).toEqual(['throughput']);
  expect(() => parseHkvArgs(['--workload', 'nope'])).toThrow(/unknown hkv workload/);
  expect(formatHkvRows([{ workload: 'topn', operation: 'x', fraction: 0.5, ok: true }])).toContain('50.0%');
});

it('runs the hkv throughput and top-N workloads on a small cache, every answer checked', async () => {
  const gpu = await testGpu();
  let out = '';
  const status = await main(
    ['hkv', '--workload', 'throughput,topn', '--capacity-log2', '10', '--dims', '1', '--loads', '0.5,1', '--reps', '1', '--quiet'],
    {
      gpu,
      stdout: (t) => {
        out += t;
      },
      stderr: () => {},
    },
  );
  expect(status, out).toBe(0);
  expect(out).toMatch(/find-miss/);
  expect(out).toMatch(/topn/);
}, 120_000);
