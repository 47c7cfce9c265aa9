import { type DeviceArray, type Dictionary, type Gpu, Op, requestGpu, requestGpus, ShardError } from '@gpuhash/core';
import { HiveTable } from '@gpuhash/hive';
import { HkvCache } from '@gpuhash/hkv';
import { HortonTable } from '@gpuhash/horton';
import { LinearProbeTable } from '@gpuhash/linear-probe';
import { SlabHashMap } from '@gpuhash/slab';
import { type CheckContext, check, defineChecks, expectMatchesModel, type Rng, TableModel } from '@gpuhash/testing';
import fc from 'fast-check';
import { HostPartition, SHARD_SEED, ShardedCache, ShardedTable, shardOf } from '../src/index';

/**
 * The sharded table against the CPU model, on two devices: two GPUs where the host has them
 * (requestGpus), else a second device on the same adapter (SwiftShader in CI). Shards are
 * linear-probe tables (and HKV caches); failure checks destroy a device of their own.
 */

let pair: Promise<Gpu[]> | undefined;

/**
 * Two Gpus, kept for the process's life: the host's first two GPUs where it has several (both from
 * requestGpus: which physical GPU the check's own Gpu is on is not known, so it is not one of
 * them), else the check's Gpu and a second device on the same adapter.
 */
async function twoGpus(gpu: Gpu): Promise<Gpu[]> {
  pair ??= (async () => {
    const all = await requestGpus({ count: 2, log: () => {} });
    return all.length > 1 ? all : [gpu, all[0] as Gpu];
  })();
  return pair;
}

/** A fresh device of the first adapter: for checks that destroy it. */
function spareGpu(): Promise<Gpu> {
  return requestGpu({ log: () => {} });
}

function lp(capacity: number) {
  return (gpu: Gpu) => LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 0.9 });
}

/** Distinct keys below the reserved range. */
function keysOf(rng: Rng, n: number): Uint32Array {
  return rng.distinctU32(n, [0xffffffff, 0xfffffffe, 0xfffffffd]).map((k) => (k >= 0xfffffff0 ? k - 0x100 : k));
}

type Step =
  | { op: 'insert' | 'insertOrAssign'; pick: number[]; values: number[] }
  | { op: 'find' | 'erase'; pick: number[] }
  | { op: 'apply'; pick: number[]; ops: number[]; values: number[] };

const stepArb = (universe: number): fc.Arbitrary<Step> => {
  const pick = fc.array(fc.nat(universe - 1), { minLength: 0, maxLength: 48 });
  return fc.oneof(
    fc.record({ op: fc.constantFrom('insert' as const, 'insertOrAssign' as const), pick, values: fc.array(fc.nat(), { maxLength: 48 }) }),
    fc.record({ op: fc.constantFrom('find' as const, 'erase' as const), pick }),
    fc.record({
      op: fc.constant('apply' as const),
      pick: fc.uniqueArray(fc.nat(universe - 1), { maxLength: 48 }),
      ops: fc.array(fc.constantFrom(Op.insert, Op.insertOrAssign, Op.find, Op.erase), { maxLength: 48 }),
      values: fc.array(fc.nat(), { maxLength: 48 }),
    }),
  );
};

async function runSteps(table: ShardedTable, model: TableModel, universe: Uint32Array, steps: Step[]): Promise<void> {
  for (const step of steps) {
    const keys = Uint32Array.from(step.pick, (i) => universe[i] as number);
    if (step.op === 'insert' || step.op === 'insertOrAssign') {
      const list = step.values;
      const values = Uint32Array.from(keys, (_, i) => (list[i] ?? i) >>> 0);
      const before = model.size;
      const r = await table[step.op](keys, values);
      check(r.failed.length === 0, `${step.op}: ${r.failed.length} keys failed`);
      const allowed = model.insert(keys, values, step.op === 'insertOrAssign');
      check(r.inserted === model.size - before, `${step.op}: inserted ${r.inserted}, the model added ${model.size - before}`);
      const got = await table.find(keys);
      expectMatchesModel(keys, got.found, got.values, model, allowed);
    } else if (step.op === 'find') {
      const got = await table.find(keys);
      expectMatchesModel(keys, got.found, got.values, model);
    } else if (step.op === 'erase') {
      const erased = await table.erase(keys);
      const want = model.erase(keys);
      check(erased === want, `erase: ${erased} erased, the model ${want}`);
    } else {
      const n = keys.length;
      const { ops: opList, values: valueList } = step as Extract<Step, { op: 'apply' }>;
      const ops = Uint8Array.from({ length: n }, (_, i) => opList[i] ?? Op.find);
      const values = Uint32Array.from({ length: n }, (_, i) => (valueList[i] ?? i) >>> 0);
      const r = await table.apply({ ops, keys, values });
      // Distinct keys: the sequential outcome.
      for (let i = 0; i < n; i++) {
        const k = keys[i] as number;
        const had = model.map.has(k);
        const op = ops[i] as number;
        if (op === Op.find) {
          check(
            r.status[i] === (had ? 1 : 0) && r.values[i] === (had ? model.map.get(k) : 0),
            `apply find ${i}: ${r.status[i]}/${r.values[i]}`,
          );
        } else if (op === Op.erase) {
          check(r.status[i] === (had ? 1 : 0), `apply erase ${i}: status ${r.status[i]}`);
          model.map.delete(k);
        } else {
          check(r.status[i] === (had ? 0 : 1), `apply insert ${i}: status ${r.status[i]}`);
          if (!had || op === Op.insertOrAssign) model.map.set(k, values[i] as number);
        }
      }
    }
    check(table.size === model.size, `size ${table.size}, the model ${model.size}`);
  }
}

async function prop(ctx: CheckContext, property: fc.IAsyncProperty<[Step[]]>, numRuns: number): Promise<void> {
  await fc.assert(property, { seed: ctx.rng.u32() | 0, numRuns, interruptAfterTimeLimit: 20_000 * ctx.scale });
}

export const shardedChecks = defineChecks('sharded', [
  {
    name: 'the host partition keeps each shard in batch order and merges back',
    async run({ rng, scale }) {
      for (const shards of [1, 2, 3, 8]) {
        const n = 5000 * scale;
        const words = rng.u32Array(n);
        const part = new HostPartition(words, 1, shards, SHARD_SEED);
        const parts = part.split(words);
        for (let s = 0; s < shards; s++) {
          const idx = part.indicesOf(s);
          check(idx.length === parts[s]?.length, `shard ${s}: ${idx.length} indices, ${parts[s]?.length} keys`);
          idx.forEach((i, j) => {
            check(parts[s]?.[j] === words[i] && shardOf(words[i] as number, shards) === s, `shard ${s} entry ${j}`);
          });
          if (shards > 1) check(Math.abs(idx.length - n / shards) < 6 * Math.sqrt(n), `shard ${s} got ${idx.length} of ${n}`);
        }
        const back = part.merge(parts, Uint32Array);
        check(
          back.every((w, i) => w === words[i]),
          'merge gives the batch back',
        );
        // u64 keys: (low, high) pairs split two words at a time, the shard of the bigint.
        const pairs = rng.u32Array(2 * 100);
        const wide = new HostPartition(pairs, 2, shards, SHARD_SEED);
        for (let i = 0; i < 100; i++) {
          const k = (BigInt(pairs[2 * i + 1] as number) << 32n) | BigInt(pairs[2 * i] as number);
          check(wide.ids[i] === shardOf(k, shards), `u64 key ${i}`);
        }
        check(
          wide.merge(wide.split(pairs, 2), Uint32Array, 2).every((w, i) => w === pairs[i]),
          'u64 merge',
        );
      }
    },
  },
  {
    name: 'random batches on two shards match the model (fast-check)',
    async run(ctx) {
      const gpus = await twoGpus(ctx.gpu);
      const universe = keysOf(ctx.rng, 96);
      const table = await ShardedTable.create(gpus, lp(1024));
      try {
        check(table.shardCount === 2 && table.capabilities.has('apply'), 'two shards that apply mixed batches');
        await prop(
          ctx,
          fc.asyncProperty(fc.array(stepArb(universe.length), { minLength: 1, maxLength: 8 }), async (steps) => {
            await table.clear();
            await runSteps(table, new TableModel(), universe, steps);
          }),
          12,
        );
      } finally {
        table.destroy();
      }
    },
  },
  {
    name: 'a big batch splits across shards and answers in order; retrieveAll, stats, reserved keys',
    async run({ gpu, rng, scale }) {
      const gpus = await twoGpus(gpu);
      const n = 4000 * scale;
      const table = await ShardedTable.create(gpus, lp(4 * n));
      try {
        const keys = keysOf(rng, 2 * n);
        const values = rng.u32Array(2 * n);
        const r = await table.insert(keys.subarray(0, n), values.subarray(0, n));
        check(r.inserted === n && r.failed.length === 0 && table.size === n, `inserted ${r.inserted}, size ${table.size}`);
        check(
          table.shardSizes.every((s) => s > n / 4),
          `shard sizes ${table.shardSizes}`,
        );
        const got = await table.find(keys);
        for (let i = 0; i < 2 * n; i++) {
          const hit = i < n;
          if (got.found[i] !== (hit ? 1 : 0) || (hit && got.values[i] !== values[i]))
            throw new Error(`key ${i}: ${got.found[i]}/${got.values[i]}`);
        }
        const all = await table.retrieveAll();
        check(all.keys.length === n, `retrieveAll: ${all.keys.length}`);
        const stats = await table.stats();
        check(stats.size === n && stats.shards.length === 2 && stats.capacity === table.capacity, `stats ${JSON.stringify(stats)}`);
        let refused: unknown;
        try {
          await table.insert(new Uint32Array([5, 0xffffffff, 6]), new Uint32Array(3));
        } catch (e) {
          refused = e;
        }
        const e = refused as { code?: string; indices?: Uint32Array };
        check(e?.code === 'RESERVED_KEY' && e.indices?.[0] === 1, `reserved key: ${String(refused)}`);
        check(
          (await table.contains(new Uint32Array([5, 6]))).every((f) => f === 0),
          'a refused batch applied nothing',
        );
      } finally {
        table.destroy();
      }
    },
  },
  {
    name: 'device-resident batches are partitioned on their GPU and answered there',
    async run({ gpu, rng, scale }) {
      const gpus = await twoGpus(gpu);
      const n = 3000 * scale;
      const table = await ShardedTable.create(gpus, lp(4 * n));
      try {
        const keys = keysOf(rng, 2 * n);
        const values = rng.u32Array(n);
        for (const home of [0, 1]) {
          const g = gpus[home] as Gpu;
          await table.clear();
          const dk = g.upload(keys.subarray(0, n));
          const dv = g.upload(values);
          let timing: { crossBytes: number } | undefined;
          const r = await table.insert(dk, dv, { home: g, onTiming: (t) => (timing = t) });
          check(r.inserted === n && r.failed.length === 0, `home ${home}: inserted ${r.inserted}`);
          check((timing?.crossBytes ?? 0) > 0, 'some keys crossed to the other GPU');
          const q = g.upload(keys);
          const found = await table.find(q as DeviceArray<'u32'>, { home: g });
          const fv = await g.download(found.values);
          const ff = await g.download(found.found);
          for (let i = 0; i < 2 * n; i++) {
            const hit = i < n;
            if (ff[i] !== (hit ? 1 : 0) || (hit && fv[i] !== values[i])) throw new Error(`home ${home} key ${i}: ${ff[i]}/${fv[i]}`);
          }
          const host = await table.find(keys.subarray(0, 10));
          check(
            host.found.every((f) => f === 1),
            'host finds see device inserts',
          );
          const erased = await table.erase(g.upload(keys.subarray(0, n / 2)), { home: g });
          check(erased === n / 2 && table.size === n - n / 2, `erased ${erased}, size ${table.size}`);
          for (const a of [dk, dv, q, found.values, found.found]) a.destroy();
        }
      } finally {
        table.destroy();
      }
    },
  },
  {
    name: 'every table design serves as a shard (hive, slab, horton), reserved keys learnt from it',
    async run({ gpu, rng }) {
      const gpus = await twoGpus(gpu);
      const designs: Array<[string, (g: Gpu) => Promise<Dictionary>]> = [
        ['hive', (g) => HiveTable.create(g, { capacity: 4096 })],
        ['slab', (g) => SlabHashMap.create(g, { capacity: 4096 })],
        ['horton', (g) => HortonTable.create(g, { capacity: 4096 })],
      ];
      for (const [name, factory] of designs) {
        const table = await ShardedTable.create(gpus, factory);
        try {
          const keys = keysOf(rng, 1500);
          const values = rng.u32Array(1500);
          const r = await table.insert(keys.subarray(0, 1000), values.subarray(0, 1000));
          check(r.inserted === 1000 && r.failed.length === 0, `${name}: inserted ${r.inserted}, failed ${r.failed.length}`);
          const got = await table.find(keys);
          for (let i = 0; i < keys.length; i++) {
            const hit = i < 1000;
            if (got.found[i] !== (hit ? 1 : 0) || (hit && got.values[i] !== values[i])) throw new Error(`${name}: key ${i}`);
          }
          check((await table.erase(keys.subarray(0, 500))) === 500 && table.size === 500, `${name}: erase`);
          let refused: unknown;
          await table.insert(new Uint32Array([1, 0xffffffff]), new Uint32Array(2)).catch((e: unknown) => {
            refused = e;
          });
          check((refused as { code?: string })?.code === 'RESERVED_KEY', `${name}: a reserved key is refused: ${String(refused)}`);
        } finally {
          table.destroy();
        }
      }
    },
  },
  {
    name: 'u64 keys shard by both words',
    async run({ gpu, rng }) {
      const gpus = await twoGpus(gpu);
      const table = await ShardedTable.create<'u64'>(gpus, (g) => LinearProbeTable.create<'u64'>(g, { capacity: 4096, keyType: 'u64' }));
      try {
        const keys = BigUint64Array.from({ length: 600 }, (_, i) => (BigInt(rng.u32()) << 32n) | BigInt(i));
        const values = rng.u32Array(600);
        await table.insert(keys, values);
        const shards = new Set(Array.from(keys, (k) => table.shardOf(k)));
        check(shards.size === 2, 'keys on both shards');
        const got = await table.find(keys);
        check(got.values.every((v, i) => v === values[i]) && got.found.every((f) => f === 1), 'u64 finds');
        const words = new Uint32Array(keys.buffer.slice(0));
        check((await table.erase(words)) === 600 && table.size === 0, 'u64 erase from (low, high) pairs');
      } finally {
        table.destroy();
      }
    },
  },
  {
    name: 'HKV caches as shards: insertOrAssign, find, contains, erase, size, evictions',
    async run({ gpu, rng }) {
      const gpus = await twoGpus(gpu);
      const dim = 4;
      const cache = await ShardedCache.create(gpus, (g) => HkvCache.create(g, { capacity: 1024, dim }));
      try {
        const n = 300;
        const keys = BigUint64Array.from({ length: n }, () => (BigInt(rng.u32()) << 32n) | BigInt(rng.u32()));
        const values = Float32Array.from({ length: n * dim }, (_, i) => i);
        const up = await cache.insertOrAssign(keys, values);
        check(up.inserted === n && up.status.length === n && (await cache.size()) === n, `inserted ${up.inserted}`);
        const got = await cache.find(keys);
        check(got.found.every((f) => f === 1) && got.values.every((v, i) => v === values[i]), 'values in batch order');
        const misses = BigUint64Array.from({ length: 10 }, (_, i) => BigInt(i + 1));
        check(
          (await cache.contains(misses)).every((f) => f === 0),
          'misses',
        );
        check((await cache.erase(keys.subarray(0, 100))) === 100 && (await cache.size()) === n - 100, 'erase');
        // Fill past capacity: every shard evicts from its own buckets.
        const more = BigUint64Array.from({ length: 4000 }, (_, i) => BigInt(i) * 0x9e3779b97f4a7c15n);
        const ev = await cache.insertAndEvict(more, new Float32Array(more.length * dim).fill(1));
        check(ev.evictedKeys.length === ev.evicted && ev.evictedValues.length === ev.evicted * dim, `evicted ${ev.evicted}`);
        check((await cache.size()) <= cache.capacity, 'within capacity');
      } finally {
        cache.destroy();
      }
    },
  },
  {
    name: 'a lost device fails the operations that touch its shard with ShardError; the other shard answers',
    async run({ gpu, rng }) {
      const victim = await spareGpu();
      const table = await ShardedTable.create([gpu, victim], lp(4096));
      try {
        const keys = keysOf(rng, 1000);
        const values = rng.u32Array(1000);
        await table.insert(keys, values);
        const on0 = keys.filter((k) => table.shardOf(k) === 0);
        victim.device.destroy();
        await new Promise((r) => setTimeout(r, 50));
        check(table.deadShards.join() === '1', `dead shards: ${table.deadShards}`);
        // Only shard 0: answers.
        const alive = await table.find(on0);
        check(
          alive.found.every((f) => f === 1),
          'shard 0 still answers',
        );
        // Both: ShardError with shard 1's batch indices and shard 0's answers.
        let error: unknown;
        try {
          await table.find(keys);
        } catch (e) {
          error = e;
        }
        check(error instanceof ShardError && error.shard === 1 && error.dead, `find: ${String(error)}`);
        const se = error as ShardError;
        const want = Array.from(keys.keys()).filter((i) => table.shardOf(keys[i] as number) === 1);
        check(se.indices.join() === want.join(), 'indices name the dead shard keys');
        const partial = se.partial as { found: Uint8Array; values: Uint32Array };
        for (let i = 0; i < keys.length; i++) {
          const on = table.shardOf(keys[i] as number) === 0;
          if (partial.found[i] !== (on ? 1 : 0) || (on && partial.values[i] !== values[i])) throw new Error(`partial ${i}`);
        }
        // An insert touching both: shard 0's part is applied (and acknowledged in partial).
        const fresh = keysOf(rng, 200).map((k) => k ^ 0x5a5a5a5a);
        let insertError: unknown;
        try {
          await table.insert(fresh, fresh);
        } catch (e) {
          insertError = e;
        }
        check(insertError instanceof ShardError, `insert: ${String(insertError)}`);
        const acknowledged = (insertError as ShardError).partial as { inserted: number };
        const fresh0 = fresh.filter((k) => table.shardOf(k) === 0);
        check(acknowledged.inserted === fresh0.length, `partial insert: ${acknowledged.inserted} of ${fresh0.length}`);
        check(
          (await table.find(fresh0)).found.every((f) => f === 1),
          'what was acknowledged is there',
        );
      } finally {
        table.destroy();
        victim.destroy();
      }
    },
  },
]);
