import { DestroyedError, InvalidArgumentError, LimitExceededError } from '@gpuhash/core';
import { fmix32 } from '@gpuhash/kernels';
import {
  universe as anyUniverse,
  type CheckContext,
  check,
  defineChecks,
  expectApplyMatchesModel,
  expectMatchesModel,
  expectReservedKeysRefused,
  expectSameArrays,
  pick,
  type Rng,
  TableModel,
} from '@gpuhash/testing';
import { LinearProbeTable, Op, RESERVED_KEYS } from '../src';

const expect = check;
const universe = (rng: Rng, n: number) => anyUniverse(rng, n, RESERVED_KEYS);

async function expectTableMatches(table: LinearProbeTable, model: TableModel, probe: Uint32Array, what: string): Promise<void> {
  const { values, found } = await table.find(probe);
  try {
    expectMatchesModel(probe, found, values, model);
  } catch (e) {
    throw new Error(`${what}: ${(e as Error).message}`);
  }
  expect(table.size === model.size, `${what}: size ${table.size}, model ${model.size}`);
}

async function expectExport(table: LinearProbeTable, model: TableModel, what: string): Promise<void> {
  const all = await table.retrieveAll();
  expect(all.keys.length === model.size, `${what}: retrieveAll gave ${all.keys.length} pairs, model has ${model.size}`);
  const seen = new Set<number>();
  for (let i = 0; i < all.keys.length; i++) {
    const k = all.keys[i] as number;
    expect(!seen.has(k), `${what}: key 0x${k.toString(16)} appears twice in the table`);
    seen.add(k);
    expect(model.map.get(k) === all.values[i], `${what}: exported 0x${k.toString(16)} -> ${all.values[i]}, model says ${model.map.get(k)}`);
  }
}

async function randomSequence({ gpu, rng, scale }: CheckContext, growth: boolean, bulkInsert: 'auto' | 'always' = 'auto'): Promise<void> {
  const keys = universe(rng, 3000 * scale);
  const table = await LinearProbeTable.create(gpu, { capacity: growth ? 64 : 16_384 * scale, maxLoadFactor: 0.85, bulkInsert });
  const model = new TableModel();
  for (let step = 0; step < 24; step++) {
    const n = 1 + rng.below(800 * scale);
    const kind = rng.below(4);
    const batch = pick(rng, keys, n);
    if (kind <= 1) {
      const values = rng.u32Array(n);
      const assign = kind === 1;
      const r = assign ? await table.insertOrAssign(batch, values) : await table.insert(batch, values);
      const before = model.size;
      const allowed = model.insert(batch, values, assign);
      expect(r.failed.length === 0, `step ${step}: ${r.failed.length} keys failed with growth on`);
      expect(r.inserted === model.size - before, `step ${step}: inserted ${r.inserted}, model added ${model.size - before}`);
      const { values: got, found } = await table.find(batch);
      expectMatchesModel(batch, found, got, model, allowed);
    } else if (kind === 2) {
      const erased = await table.erase(batch);
      const want = model.erase(batch);
      expect(erased === want, `step ${step}: erase removed ${erased}, model removed ${want}`);
    } else {
      await expectTableMatches(table, model, batch, `step ${step} find`);
    }
  }
  await expectTableMatches(table, model, keys, 'final');
  await expectExport(table, model, 'final export');
  const stats = await table.stats();
  expect(stats.size === model.size, `stats.size ${stats.size}, model ${model.size}`);
  expect(stats.tombstones === table.tombstones, `stats.tombstones ${stats.tombstones}, counter ${table.tombstones}`);
  expect(stats.maxProbeLength <= table.maxProbes, `max probe ${stats.maxProbeLength} exceeds the bound ${table.maxProbes}`);
  if (growth) expect(stats.rehashes > 0 && table.capacity > 64, 'growth never happened');
  table.destroy();
}

/** Keys whose home slot is `target` in a table of `capacity` slots, from `start` upwards. */
function collidingKeys(capacity: number, count: number, target: number, start = 1): number[] {
  const out: number[] = [];
  for (let k = start; out.length < count; k++) if ((fmix32(k) & (capacity - 1)) === target) out.push(k);
  return out;
}

/** A bulk build near full: spills into the next region, then a full table's exact failures. */
async function bulkNearFull({ gpu, rng, scale }: CheckContext, bulkPairWindow?: number): Promise<void> {
  const capacity = 8192 * scale;
  const options = { capacity, growth: false, maxLoadFactor: 1, bulkInsert: 'always', maxProbes: 512, bulkPairWindow } as const;
  const table = await LinearProbeTable.create(gpu, options);
  const model = new TableModel();
  // Load 0.97 in two batches of distinct keys: many probes run off their region and spill.
  const all = universe(rng, 2 * capacity);
  const first = Math.floor(capacity * 0.6);
  const batches = [all.subarray(0, first), all.subarray(first, first + Math.floor(capacity * 0.37))];
  for (const batch of batches) {
    const values = rng.u32Array(batch.length);
    const r = await table.insert(batch, values);
    const placed = new Set(r.failed);
    const kept = batch.filter((_, i) => !placed.has(i));
    model.insert(
      kept,
      values.filter((_, i) => !placed.has(i)),
      false,
    );
    expect(r.inserted === kept.length, `inserted ${r.inserted}, expected ${kept.length} (failed ${r.failed.length})`);
    const { values: got, found } = await table.find(batch);
    expectMatchesModel(batch, found, got, model);
  }
  await expectExport(table, model, 'bulk export');
  const stats = await table.stats();
  expect(stats.maxProbeLength <= 512, `probe ${stats.maxProbeLength} beyond the bound`);
  // Over capacity: every key is either placed or named.
  const extra = all.subarray(capacity);
  const r = await table.insert(extra, extra);
  expect(r.inserted + r.failed.length === extra.length, `overflow: ${r.inserted} + ${r.failed.length}`);
  const f = await table.find(extra);
  const failed = new Set(r.failed);
  for (let i = 0; i < extra.length; i++) {
    expect((f.found[i] === 1) === !failed.has(i), `overflow key ${i}: found ${f.found[i]}, failed ${failed.has(i)}`);
  }
  table.destroy();
}

export const linearProbeChecks = defineChecks('linear-probe/table', [
  {
    name: 'random insert/insertOrAssign/erase/find sequences match a CPU model (with growth)',
    run: (ctx) => randomSequence(ctx, true),
  },
  {
    name: 'random sequences match a CPU model in a large table (no growth)',
    run: (ctx) => randomSequence(ctx, false),
  },
  {
    name: 'random sequences match a CPU model with every insert on the partitioned bulk path',
    run: (ctx) => randomSequence(ctx, false, 'always'),
  },
  {
    name: 'every read-ahead setting: near-full tables with a short probe bound and duplicate keys match a CPU model',
    async run({ gpu, rng, scale }) {
      const capacity = 1024 * scale;
      for (let round = 0; round < 4; round++) {
        const table = await LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: 48, bulkInsert: 'never' });
        // Slots read ahead by inserts (0: one at a time, up to 16) and pairs by lookups (up to 8).
        table.probing.ahead = [0, 1, 3, 8, 16][rng.below(5)] as number;
        table.probing.coopAhead = [1, 4, 8, 16][rng.below(4)] as number;
        table.probing.pairsAhead = [0, 1, 3, 4, 8][rng.below(5)] as number;
        // Lookups walk their long probes with the subgroup (when the device has subgroups), after 0-3 steps alone.
        table.probing.coop = gpu.subgroups.supported && rng.below(4) !== 0;
        table.probing.coopFromLoad = 0;
        table.probing.privateSteps = rng.below(4);
        table.probing.privateInsertSteps = rng.below(4);
        table.probing.coopTile = [1, 2, 8, 32][rng.below(4)] as number;
        const what = `ahead ${table.probing.ahead} (${table.probing.coopAhead}):${table.probing.pairsAhead}, coop ${table.probing.coop} after ${table.probing.privateSteps} / ${table.probing.privateInsertSteps} in ${table.probing.coopTile}`;
        const model = new TableModel();
        const keys = universe(rng, capacity + capacity / 4);
        for (let step = 0; step < 4; step++) {
          const batch = pick(rng, keys, Math.floor(capacity * 0.4));
          const values = rng.u32Array(batch.length);
          const assign = step % 2 === 1;
          const r = assign ? await table.insertOrAssign(batch, values) : await table.insert(batch, values);
          const failed = new Set(r.failed);
          const before = model.size;
          const allowed = model.insert(
            batch.filter((_, i) => !failed.has(i)),
            values.filter((_, i) => !failed.has(i)),
            assign,
          );
          expect(r.inserted === model.size - before, `${what}, step ${step}: inserted ${r.inserted}, model added ${model.size - before}`);
          // A key reported failed is absent: every copy of it in the batch failed.
          for (const i of r.failed) expect(!model.map.has(batch[i] as number), `${what}: failed key index ${i} is in the table`);
          const { values: got, found } = await table.find(keys);
          expectMatchesModel(keys, found, got, model, allowed);
        }
        await expectExport(table, model, what);
        const stats = await table.stats();
        expect(stats.maxProbeLength <= 48, `${what}: probe ${stats.maxProbeLength} beyond the bound`);
        table.destroy();
      }
    },
  },
  {
    name: 'bulk path: near-full regions spill into the next region; a full table reports exact indices',
    run: (ctx) => bulkNearFull(ctx),
  },
  {
    name: 'bulk path with its grouped pairs over two bindings, in many parts: the same, exactly',
    run: (ctx) => bulkNearFull(ctx, 256),
  },
  {
    name: 'duplicate keys in one batch: one of their values is stored; insert keeps, insertOrAssign overwrites',
    async run({ gpu, rng, scale }) {
      const table = await LinearProbeTable.create(gpu, { capacity: 1024 * scale });
      const model = new TableModel();
      const keys = universe(rng, 50 * scale);
      for (const assign of [false, false, true]) {
        const batch = pick(rng, keys, 400 * scale);
        const values = rng.u32Array(batch.length);
        const r = assign ? await table.insertOrAssign(batch, values) : await table.insert(batch, values);
        const before = model.size;
        const allowed = model.insert(batch, values, assign);
        expect(r.inserted === model.size - before, `inserted ${r.inserted}, model ${model.size - before}`);
        const { values: got, found } = await table.find(batch);
        expectMatchesModel(batch, found, got, model, allowed);
      }
      await expectExport(table, model, 'export');
      table.destroy();
    },
  },
  {
    name: 'reserved keys are refused with a ReservedKeyError naming the index, and nothing is applied',
    async run({ gpu, rng }) {
      const table = await LinearProbeTable.create(gpu, { capacity: 256 });
      const { keys: dk, values: dv } = await expectReservedKeysRefused(gpu, rng, table, RESERVED_KEYS);
      dk.destroy();
      dv.destroy();
      table.destroy();
    },
  },
  {
    name: 'a full table without growth reports exactly the keys it could not place, and never hangs',
    async run({ gpu, rng, scale }) {
      const capacity = 256 * scale;
      const table = await LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: 64 });
      const keys = universe(rng, capacity + 100);
      const values = rng.u32Array(keys.length);
      const r = await table.insert(keys, values);
      expect(r.inserted + r.failed.length === keys.length, `inserted ${r.inserted} + failed ${r.failed.length} != ${keys.length}`);
      expect(r.failed.length >= 100, `only ${r.failed.length} failures for ${keys.length} keys in ${capacity} slots`);
      const failed = new Set(r.failed);
      const { values: got, found } = await table.find(keys);
      for (let i = 0; i < keys.length; i++) {
        const shouldBe = failed.has(i) ? 0 : 1;
        expect(found[i] === shouldBe, `key index ${i}: found=${found[i]} but failed list says ${failed.has(i) ? 'failed' : 'placed'}`);
        if (shouldBe) expect(got[i] === values[i], `key index ${i}: wrong value`);
      }
      expect(table.size === r.inserted, `size ${table.size}, inserted ${r.inserted}`);
      table.destroy();
    },
  },
  {
    name: 'tombstones are reused without ever duplicating a key (erase, then re-insert a colliding key)',
    async run({ gpu, rng }) {
      const capacity = 64;
      const table = await LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1 });
      const home = fmix32(1) & (capacity - 1);
      const [a, b, c] = collidingKeys(capacity, 3, home) as [number, number, number];
      await table.insert(new Uint32Array([a, b, c]), new Uint32Array([1, 2, 3]));
      await table.erase(new Uint32Array([a]));
      // b lives after a's tombstone: inserting it again must find it, not take the tombstone.
      const r = await table.insert(new Uint32Array([b, c]), new Uint32Array([20, 30]));
      expect(r.inserted === 0, `re-inserting present keys added ${r.inserted}`);
      await table.insertOrAssign(new Uint32Array([b]), new Uint32Array([22]));
      const model = new TableModel();
      model.map.set(b, 22).set(c, 3);
      await expectExport(table, model, 'after reuse');
      // A new colliding key takes the tombstone.
      const [d] = collidingKeys(capacity, 1, home, c + 1) as [number];
      await table.insert(new Uint32Array([d]), new Uint32Array([4]));
      model.map.set(d, 4);
      expect(table.tombstones === 0, `tombstones ${table.tombstones} after reuse`);
      await expectExport(table, model, 'after new key');
      // Churn: many erase/insert rounds over a small key set never duplicate.
      const keys = universe(rng, 40);
      for (let round = 0; round < 20; round++) {
        const ins = pick(rng, keys, 30);
        const vals = rng.u32Array(30);
        model.insert(ins, vals, false);
        await table.insert(ins, vals);
        const { values: got, found } = await table.find(ins);
        expectMatchesModel(
          ins,
          found,
          got,
          model,
          new Map([...new Set(ins)].map((k) => [k, new Set([model.map.get(k) as number, ...vals])])),
        );
        const del = pick(rng, keys, 15);
        model.erase(del);
        await table.erase(del);
      }
      await expectExport(table, model, 'after churn');
      table.destroy();
    },
  },
  {
    name: 'growth and rehash keep every key; rehash can shrink; a rehash below the size is refused',
    async run({ gpu, rng, scale }) {
      const table = await LinearProbeTable.create(gpu, { capacity: 64, maxLoadFactor: 0.7 });
      const keys = universe(rng, 20_000 * scale);
      const values = rng.u32Array(keys.length);
      const r = await table.insert(keys, values);
      expect(r.inserted === keys.length, `inserted ${r.inserted}`);
      expect(table.loadFactor <= 0.7, `load ${table.loadFactor} after growth`);
      const model = new TableModel();
      model.insert(keys, values, false);
      await table.erase(keys.subarray(0, keys.length / 2));
      model.erase(keys.subarray(0, keys.length / 2));
      await table.rehash(table.size * 2);
      expect(table.tombstones === 0, 'rehash kept tombstones');
      await expectTableMatches(table, model, keys, 'after shrink');
      let error: unknown;
      await table.rehash(table.size - 1).catch((e) => (error = e));
      expect(error instanceof InvalidArgumentError, 'rehash below the size was accepted');
      table.destroy();
    },
  },
  {
    name: 'mixed batches (apply) on distinct keys match the model; conflicting ops return only stored values',
    async run({ gpu, rng, scale }) {
      const table = await LinearProbeTable.create(gpu, { capacity: 4096 * scale });
      const model = new TableModel();
      const keys = universe(rng, 4000 * scale);
      const seed = keys.subarray(0, 1000 * scale);
      const seedValues = rng.u32Array(seed.length);
      await table.insert(seed, seedValues);
      model.insert(seed, seedValues, false);
      // Each key appears once per batch: the outcome is the sequential one.
      const n = 2000 * scale;
      const order = universe(rng, n).map((_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = rng.below(i + 1);
        [order[i], order[j]] = [order[j] as number, order[i] as number];
      }
      const batchKeys = Uint32Array.from(order, (i) => keys[i] as number);
      const ops = Uint8Array.from(batchKeys, () => rng.below(4));
      const values = rng.u32Array(n);
      const result = await table.apply({ ops, keys: batchKeys, values });
      expectApplyMatchesModel(ops, batchKeys, values, result, model, 'apply');
      await expectTableMatches(table, model, keys, 'after apply');
      // Conflicting ops on few keys: a find returns nothing or a value that was stored under its key.
      const hot = keys.subarray(0, 16);
      const conflictKeys = pick(rng, hot, 4000 * scale);
      const conflictOps = Uint8Array.from(conflictKeys, () => rng.below(4));
      const conflictValues = Uint32Array.from(conflictKeys, (k) => fmix32(k ^ rng.below(4)));
      const stored = new Map<number, Set<number>>();
      for (const k of hot) stored.set(k, new Set(model.map.has(k) ? [model.map.get(k) as number] : []));
      conflictKeys.forEach((k, i) => {
        if ((conflictOps[i] as number) <= Op.insertOrAssign) stored.get(k)?.add(conflictValues[i] as number);
      });
      const c = await table.apply({ ops: conflictOps, keys: conflictKeys, values: conflictValues });
      for (let i = 0; i < conflictKeys.length; i++) {
        if (conflictOps[i] !== Op.find || c.status[i] === 0) continue;
        const k = conflictKeys[i] as number;
        expect(
          stored.get(k)?.has(c.values[i] as number) ?? false,
          `conflicting find of 0x${k.toString(16)} returned ${c.values[i]}, never stored`,
        );
      }
      const all = await table.retrieveAll();
      expect(new Set(all.keys).size === all.keys.length, 'a key appears twice after conflicting inserts');
      table.destroy();
    },
  },
  {
    name: 'device-resident batches in and out match host batches',
    async run({ gpu, rng, scale }) {
      const table = await LinearProbeTable.create(gpu, { capacity: 1024 });
      const keys = universe(rng, 5000 * scale);
      const values = rng.u32Array(keys.length);
      const dk = gpu.upload(keys);
      const dv = gpu.upload(values);
      const r = await table.insert(dk, dv);
      expect(r.inserted === keys.length, `device insert added ${r.inserted}`);
      const probe = gpu.upload(keys);
      const out = await table.find(probe);
      expectSameArrays('device find values', await gpu.download(out.values), values);
      expectSameArrays('device find flags', await gpu.download(out.found), new Uint32Array(keys.length).fill(1));
      expect((await table.erase(probe)) === keys.length, 'device erase count');
      for (const a of [dk, dv, probe, out.values, out.found]) a.destroy();
      table.destroy();
    },
  },
  {
    name: 'finds in window order over slots in 4 bindings match a CPU model: hits, misses, probes across windows',
    async run({ gpu, rng, scale }) {
      const capacity = 4096 * scale;
      const keys = universe(rng, capacity);
      const stored = keys.subarray(0, Math.floor(capacity * 0.9));
      const options = { capacity, growth: false, maxLoadFactor: 1, windows: 4, windowOrder: 'always', bulkInsert: 'never' } as const;
      const table = await LinearProbeTable.create(gpu, options);
      const model = new TableModel();
      const values = rng.u32Array(stored.length);
      const r = await table.insert(stored, values);
      model.insert(stored, values, false);
      expect(r.failed.length === 0, `${r.failed.length} keys not placed at load 0.9`);
      // One key; part of a workgroup; several chunks of several rounds each; the whole universe.
      for (const n of [1, 200, 1025 + rng.below(3000 * scale), keys.length]) {
        await expectTableMatches(table, model, pick(rng, keys, n), `a batch of ${n}`);
      }
      // More keys (duplicates and assignments included), then every key found in window order.
      const more = pick(rng, keys, 1025 + rng.below(300 * scale));
      const moreValues = rng.u32Array(more.length);
      const before = model.size;
      const added = await table.insertOrAssign(more, moreValues);
      const allowed = model.insert(more, moreValues, true);
      expect(
        added.failed.length === 0 && added.inserted === model.size - before,
        `inserted ${added.inserted}, model added ${model.size - before}`,
      );
      const { values: got, found } = await table.find(more);
      expectMatchesModel(more, found, got, model, allowed);
      await expectTableMatches(table, model, keys, 'after the ordered inserts');
      table.destroy();
    },
  },
  {
    name: 'misuse gets typed errors: mismatched lengths, use after destroy',
    async run({ gpu }) {
      const table = await LinearProbeTable.create(gpu, { capacity: 64 });
      let error: unknown;
      await table.insert(new Uint32Array(3), new Uint32Array(2)).catch((e) => (error = e));
      expect(error instanceof InvalidArgumentError && /3 entries but values has 2/.test(error.message), `lengths: ${error}`);
      table.destroy();
      error = undefined;
      await table.find(new Uint32Array([1])).catch((e) => (error = e));
      expect(error instanceof DestroyedError, `after destroy: ${error}`);
      // 2^32 slots of 8 bytes (32 GiB) would take more storage bindings than a pass holds (tables
      // past one binding split their slots into windows, 8 at most on a GPU): refused up front, typed.
      error = undefined;
      await LinearProbeTable.create(gpu, { capacity: 2 ** 32 }).catch((e) => (error = e));
      expect(
        error instanceof LimitExceededError &&
          /linear-probe\.slots/.test(error.message) &&
          error.limit === 'maxStorageBuffersPerShaderStage',
        `over the limit: ${error}`,
      );
    },
  },
]);
