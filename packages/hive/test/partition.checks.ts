import { defineChecks } from '@gpuhash/testing';
import { candidateBuckets, HiveTable, splitPointerFor } from '../src';
import type { Dispatcher } from '../src/dispatcher';
import type { BulkScratch, HiveStorage } from '../src/storage';
import { REGION_BUCKETS } from '../src/wgsl/bulk';
import { universe } from './keys';
import { expect } from './table.checks';

/** The table's dispatcher and storage (internal: the partition is not public API). */
function internals(table: HiveTable): { d: Dispatcher; storage: HiveStorage } {
  return table as unknown as { d: Dispatcher; storage: HiveStorage };
}

/**
 * The bulk build's partition by region (count, scan, scatter) against a CPU model: for tables of
 * a few regions to a thousand, with reserved keys and duplicates in the batch, every region's
 * records lie between its end offsets and are its keys, every non-reserved batch entry is one
 * record (key, value, batch index), and the spill holds exactly the reserved entries.
 */
export const partitionChecks = defineChecks('hive/partition', [
  {
    name: 'the partition by region groups every batch entry under its first bucket, reserved ones in the spill',
    async run({ gpu, rng, scale }) {
      for (const buckets of [40 + rng.below(200), 1024 * REGION_BUCKETS + 37]) {
        const table = await HiveTable.create(gpu, { capacity: buckets * 32, growth: false, bulkInsert: 'always' });
        const regions = Math.ceil(table.buckets / REGION_BUCKETS);
        const n = (20_000 + rng.below(4096)) * scale;
        const pool = universe(rng, n);
        // A third of the batch repeats earlier keys; a few entries are reserved.
        const keys = Uint32Array.from({ length: n }, (_, i) =>
          i > 0 && rng.below(3) === 0 ? (pool[rng.below(i)] as number) : (pool[i] as number),
        );
        const reserved = new Set<number>();
        for (let r = 0; r < 5; r++) {
          const i = rng.below(n);
          keys[i] = r % 2 === 0 ? 0xffffffff : 0xfffffffe;
          reserved.add(i);
        }
        const values = rng.u32Array(n);
        const { d, storage } = internals(table);
        const scratch: BulkScratch = storage.bulkScratch(n, table.buckets);
        const dk = gpu.upload(keys);
        const dv = gpu.upload(values);
        const encoder = gpu.device.createCommandEncoder();
        encoder.clearBuffer(scratch.spill, 0, 4);
        d.encodePartition(encoder, { keys: dk.buffer, values: dv.buffer, n, mode: 0 }, scratch);
        gpu.submit([encoder.finish()]);
        const ends = new Uint32Array(await gpu.readBytes(scratch.cursors, 0, regions * 4));
        const records = new Uint32Array(await gpu.readBytes(scratch.records, 0, n * 16));
        const spill = new Uint32Array(await gpu.readBytes(scratch.spill, 0, (n + 1) * 4));
        const what = `${table.buckets} buckets, ${n} keys`;
        const total = n - reserved.size;
        expect(ends[regions - 1] === total, `${what}: the last region ends at ${ends[regions - 1]}, not ${total}`);
        const p = splitPointerFor(table.buckets);
        const seen = new Uint8Array(n);
        let begin = 0;
        for (let r = 0; r < regions; r++) {
          const end = ends[r] as number;
          expect(end >= begin && end <= total, `${what}: region ${r} ends at ${end} after ${begin}`);
          for (let at = begin; at < end; at++) {
            const key = records[4 * at] as number;
            const value = records[4 * at + 1] as number;
            const i = records[4 * at + 2] as number;
            const region = Math.floor(candidateBuckets(key, p)[0] / REGION_BUCKETS);
            expect(region === r, `${what}: record ${at} (key 0x${key.toString(16)}) of region ${region} lies in region ${r}`);
            expect(i < n && keys[i] === key && values[i] === value, `${what}: record ${at} is not batch entry ${i}`);
            expect(seen[i] === 0, `${what}: batch entry ${i} partitioned twice`);
            seen[i] = 1;
          }
          begin = end;
        }
        const spilled = Array.from(spill.subarray(1, 1 + (spill[0] as number))).sort((a, b) => a - b);
        expect(
          spilled.join() === [...reserved].sort((a, b) => a - b).join(),
          `${what}: spill holds ${spilled.join()}, reserved entries are ${[...reserved].join()}`,
        );
        for (let i = 0; i < n; i++) expect(seen[i] === 1 || reserved.has(i), `${what}: batch entry ${i} is missing`);
        dk.destroy();
        dv.destroy();
        table.destroy();
      }
    },
  },
]);
