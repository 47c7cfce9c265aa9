import { expect, it } from 'vitest';
import { main } from '../src/main';
import { parseShardedArgs } from '../src/sharded/suite';

it('parses the sharded suite arguments', () => {
  const o = parseShardedArgs(['full', '--gpus', '2', '--table', 'hive', '--load', '0.5']);
  expect(o).toMatchObject({ suite: 'full', gpus: 2, table: 'hive', load: 0.5, slotsLog2: 27 });
  expect(parseShardedArgs([]).gpus).toBeNull();
  expect(() => parseShardedArgs(['--table', 'nope'])).toThrow(/--table/);
});

it('runs one table sharded over one and two devices, every answer checked', async () => {
  let out = '';
  const status = await main(['sharded', '--capacity-log2', '10', '--reps', '1', '--device-batch-log2', '8', '--quiet'], {
    stdout: (t) => {
      out += t;
    },
    stderr: () => {},
  });
  expect(status, out).toBe(0);
  expect(out).toMatch(/\| 2 \| local \| find-hit GPU/);
  expect(out).toMatch(/copy GPU 0 -> host -> GPU 1/);
}, 120_000);
