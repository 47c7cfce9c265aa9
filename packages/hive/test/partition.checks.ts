import { countOneBits } from '@gpuhash/kernels';
import { defineChecks } from '@gpuhash/testing';
import { candidateBuckets, HiveTable, splitPointerFor } from '../src';
import type { Dispatcher } from '../src/dispatcher';
import type { BulkScratch, HiveStorage } from '../src/storage';
import { LOCAL_REGIONS, PLAN_MARGIN, REGION_BUCKETS, ROOM_BINS } from '../src/wgsl/bulk';
import { universe } from './keys';
import { expect } from './table.checks';

/** The table's dispatcher and storage (internal: the partition is not public API). */
function internals(table: HiveTable): { d: Dispatcher; storage: HiveStorage } {
  return (table as unknown as { engine: { d: Dispatcher; storage: HiveStorage } }).engine;
}

/**
 * The bulk build's partition by region (count, room, scan, scatter) against a CPU model: for
 * tables of a few regions to a thousand, part full, with reserved keys and duplicates in the
 * batch, with and without the overflow plan: every region's records lie between its end offsets
 * and are its keys, every non-reserved batch entry is one record (key, value, batch index, and
 * with the plan its second bucket's room byte), the spill holds exactly the reserved entries; with
 * the plan, every bucket's room byte is its free slots less its keys in the batch, and the
 * histogram of room bins counts them. Both ways of counting: per key with global atomics, and in
 * workgroup memory first (tables of up to LOCAL_REGIONS regions).
 */
export const partitionChecks = defineChecks('hive/partition', [
  {
    name: 'the partition by region groups every batch entry under its first bucket, reserved ones in the spill',
    async run({ gpu, rng, scale }) {
      for (const [buckets, plan, local] of [
        [40 + rng.below(200), true, true],
        [1024 * REGION_BUCKETS + 37, true, true],
        [40 + rng.below(200), false, true],
        [(LOCAL_REGIONS - 1) * REGION_BUCKETS + 1 + rng.below(REGION_BUCKETS), false, true],
        [40 + rng.below(200), true, false],
        [40 + rng.below(200), false, false],
      ] as const) {
        const table = await HiveTable.create(gpu, { capacity: buckets * 32, growth: false, bulkInsert: 'always' });
        const regions = Math.ceil(table.buckets / REGION_BUCKETS);
        const n = (20_000 + rng.below(4096)) * scale;
        const pool = universe(rng, n + table.buckets * 8);
        // The table holds keys already (up to a sixteenth full), so free masks differ by bucket.
        const before = pool.subarray(n, n + rng.below(table.buckets * 2) + 1);
        await table.insert(before, before);
        const snap = await table.debugSnapshot();
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
        d.encodePartition(encoder, { keys: dk.buffer, values: dv.buffer, n, mode: 0 }, scratch, plan, undefined, local);
        gpu.submit([encoder.finish()]);
        const ends = new Uint32Array(await gpu.readBytes(scratch.cursors, 0, regions * 4));
        const room = new Uint8Array(await gpu.readBytes(scratch.room, 0, regions * REGION_BUCKETS));
        const histogram = new Uint32Array(await gpu.readBytes(scratch.room, regions * REGION_BUCKETS, ROOM_BINS * 4));
        const records = new Uint32Array(await gpu.readBytes(scratch.records, 0, n * 16));
        const spill = new Uint32Array(await gpu.readBytes(scratch.spill, 0, (n + 1) * 4));
        const what = `${table.buckets} buckets, ${n} keys, ${plan ? 'with' : 'without'} the plan, ${local ? 'local' : 'global'} counts`;
        const total = n - reserved.size;
        expect(ends[regions - 1] === total, `${what}: the last region ends at ${ends[regions - 1]}, not ${total}`);
        const p = splitPointerFor(table.buckets);
        const counts = new Int32Array(regions * REGION_BUCKETS);
        keys.forEach((k, i) => {
          const b1 = candidateBuckets(k, p)[0];
          if (!reserved.has(i)) counts[b1] = (counts[b1] as number) + 1;
        });
        const bins = new Uint32Array(ROOM_BINS);
        for (let b = 0; plan && b < regions * REGION_BUCKETS; b++) {
          const free = b < table.buckets ? countOneBits(snap.meta[b] as number) - (counts[b] as number) : 0;
          const want = Math.max(-128, Math.min(127, free)) + 128;
          expect(room[b] === want, `${what}: bucket ${b}'s room byte is ${room[b]}, not ${want}`);
          const bin = Math.max(0, Math.min(ROOM_BINS - 1, free));
          if (b < table.buckets) bins[bin] = (bins[bin] as number) + 1;
        }
        if (plan) expect(histogram.join() === bins.join(), `${what}: the room histogram is ${histogram.join()}, not ${bins.join()}`);
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
            const room2 = plan ? (room[candidateBuckets(key, p)[1]] as number) : 0;
            expect(records[4 * at + 3] === room2, `${what}: record ${at} carries room ${records[4 * at + 3]}, not ${room2}`);
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
  {
    name: 'the overflow plan sends on the keys whose second buckets have room: a build to load 0.95 leaves pass B what a CPU model of the plan leaves',
    async run({ gpu, rng, scale }) {
      const buckets = 2048 * Math.max(1, Math.min(scale, 8));
      const table = await HiveTable.create(gpu, { capacity: buckets * 32, growth: false, bulkInsert: 'always' });
      const keys = universe(rng, Math.floor(buckets * 32 * 0.95));
      const r = await table.insert(keys, keys);
      expect(r.inserted === keys.length && r.failed.length === 0, `${r.inserted} of ${keys.length} inserted, ${r.failed.length} pending`);
      const { lockedInserts } = await table.stats();
      const planned = passBModel(keys, buckets, true, rng);
      const unplanned = passBModel(keys, buckets, false, rng);
      // The model leaves a tenth or less of what claim order does; the table takes keys in its own order.
      expect(unplanned > 4 * planned, `the model: ${planned} keys to pass B with the plan, ${unplanned} without`);
      expect(
        lockedInserts <= 1.5 * planned + 16,
        `${lockedInserts} keys went to pass B; the plan's model leaves ${planned} (claim order: ${unplanned})`,
      );
      table.destroy();
    },
  },
]);

/**
 * Keys a bulk build of distinct keys into an empty table leaves pass B: those whose first bucket
 * overflows and whose second bucket has no room left once its own keys and the keys sent on before
 * them are in. With \`plan\`, each overflowing bucket sends on its first keys (in random order)
 * whose second bucket's room reaches the bar (wgsl/bulk.ts: the highest room v at which its keys
 * would bring PLAN_MARGIN times its overflow, by the table's histogram of room), then others;
 * without, it keeps its keys in random order.
 */
function passBModel(keys: Uint32Array, buckets: number, plan: boolean, rng: { below(n: number): number }): number {
  const p = splitPointerFor(buckets);
  const byBucket: number[][] = Array.from({ length: buckets }, () => []);
  for (const k of keys) (byBucket[candidateBuckets(k, p)[0]] as number[]).push(k);
  const room = byBucket.map((ks) => 32 - ks.length);
  const atLeast = Array.from({ length: ROOM_BINS }, (_, v) => room.filter((r) => Math.min(r, ROOM_BINS - 1) >= v).length);
  const left = room.map((r) => Math.max(0, r));
  const goingOn: number[] = [];
  for (const ks of byBucket) {
    const over = ks.length - 32;
    if (over <= 0) continue;
    let bar = 1;
    for (let v = 2; v < ROOM_BINS; v++) if (ks.length * (atLeast[v] as number) >= PLAN_MARGIN * over * buckets) bar = v;
    const order = ks.map((k) => ({ k, first: plan && (room[candidateBuckets(k, p)[1]] as number) >= bar, tie: rng.below(1 << 30) }));
    order.sort((a, b) => Number(b.first) - Number(a.first) || a.tie - b.tie);
    for (const { k } of order.slice(0, over)) goingOn.push(k);
  }
  let deferred = 0;
  for (const k of goingOn) {
    const b2 = candidateBuckets(k, p)[1];
    if ((left[b2] as number) > 0) left[b2] = (left[b2] as number) - 1;
    else deferred++;
  }
  return deferred;
}
