import { DestroyedError, type Gpu, InvalidArgumentError, InvalidOpError, ReservedKeyError } from '@gpuhash/core';
import { fmix32 } from '@gpuhash/kernels';
import {
  type CheckContext,
  defineChecks,
  expectApplyMatchesModel,
  expectMatchesModel,
  expectReservedKeysRefused,
  expectSameArrays,
  type GpuCheck,
  TableModel,
  thrown,
} from '@gpuhash/testing';
import { type HiveOptions, HiveTable, Op, RESERVED_KEYS } from '../src';
import { checkLayout, expectLayoutMatches } from './invariants';
import { pick, shuffle, universe } from './keys';

/** The least power of two at or above n (window sizes that follow a check's scale). */
function powerOfTwoAtLeast(n: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, n)));
}

export function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

/**
 * The two ways a table forms cooperative groups: the device's subgroups, and groups of one lane
 * (insert batches take the bulk build when 'auto' says so: on hardware, large batches).
 */
export const variants = [
  { name: 'subgroups', subgroups: true, bulk: false },
  { name: 'fallback', subgroups: false, bulk: false },
] as const;
/** Every insert batch by the bulk build (its spilled keys through subgroup op passes). */
export const bulkVariant = { name: 'bulk build', subgroups: true, bulk: true } as const;
/** The bulk build with its spilled keys through op passes in groups of one lane. */
export const bulkFallbackVariant = { name: 'bulk build, fallback', subgroups: false, bulk: true } as const;
export type Variant = (typeof variants)[number] | typeof bulkVariant | typeof bulkFallbackVariant;

/**
 * One check per variant (and the bulk build's two with `withBulk`); a subgroup one is skipped on
 * devices without subgroups.
 */
export function perVariant(name: string, run: (ctx: CheckContext, v: Variant) => Promise<void>, withBulk = false): GpuCheck[] {
  const all: Variant[] = withBulk ? [...variants, bulkVariant, bulkFallbackVariant] : [...variants];
  return all.map((v) => ({
    name: `${v.name}: ${name}`,
    async run(ctx: CheckContext) {
      if (v.subgroups && !ctx.gpu.subgroups.supported) return;
      await run(ctx, v);
    },
  }));
}

export function createTable(gpu: Gpu, v: Variant, options: HiveOptions): Promise<HiveTable> {
  return HiveTable.create(gpu, { ...options, subgroups: v.subgroups, ...(v.bulk ? { bulkInsert: 'always' as const } : {}) });
}

async function expectFinds(table: HiveTable, model: TableModel, probe: Uint32Array, what: string): Promise<void> {
  const { values, found } = await table.find(probe);
  try {
    expectMatchesModel(probe, found, values, model);
  } catch (e) {
    throw new Error(`${what}: ${(e as Error).message}`);
  }
  expect(table.size === model.size, `${what}: size ${table.size}, model ${model.size}`);
}

export async function expectExport(table: HiveTable, model: TableModel, what: string): Promise<void> {
  const all = await table.retrieveAll();
  expect(all.keys.length === model.size, `${what}: retrieveAll gave ${all.keys.length} pairs, model has ${model.size}`);
  const seen = new Set<number>();
  for (let i = 0; i < all.keys.length; i++) {
    const k = all.keys[i] as number;
    expect(!seen.has(k), `${what}: key 0x${k.toString(16)} exported twice`);
    seen.add(k);
    expect(model.map.get(k) === all.values[i], `${what}: exported 0x${k.toString(16)} -> ${all.values[i]}, model says ${model.map.get(k)}`);
  }
}

async function randomSequence(
  { gpu, rng, scale }: CheckContext,
  v: Variant,
  growth: boolean,
  extra: Partial<HiveOptions> = {},
): Promise<void> {
  const keys = universe(rng, 3000 * scale);
  const table = await createTable(gpu, v, { capacity: growth ? 64 : 8192 * scale, growth, ...extra });
  const model = new TableModel();
  for (let step = 0; step < 20; step++) {
    const n = 1 + rng.below(700 * scale);
    const kind = rng.below(5);
    const batch = pick(rng, keys, n);
    if (kind <= 1) {
      const values = rng.u32Array(n);
      const assign = kind === 1;
      const r = assign ? await table.insertOrAssign(batch, values) : await table.insert(batch, values);
      const before = model.size;
      const allowed = model.insert(batch, values, assign);
      expect(r.failed.length === 0, `step ${step}: ${r.failed.length} keys failed`);
      expect(r.inserted === model.size - before, `step ${step}: inserted ${r.inserted}, model added ${model.size - before}`);
      const { values: got, found } = await table.find(batch);
      expectMatchesModel(batch, found, got, model, allowed);
    } else if (kind === 2) {
      const erased = await table.erase(batch);
      const want = model.erase(batch);
      expect(erased === want, `step ${step}: erase removed ${erased}, model removed ${want}`);
    } else if (kind === 3) {
      await expectFinds(table, model, batch, `step ${step} find`);
    } else {
      // A mixed batch over distinct keys has the sequential outcome.
      const distinct = Uint32Array.from(new Set(batch));
      const ops = Uint8Array.from(distinct, () => rng.below(4));
      const values = rng.u32Array(distinct.length);
      const result = await table.apply({ ops, keys: distinct, values });
      expectApplyMatchesModel(ops, distinct, values, result, model, `step ${step}: apply`);
      expect(result.failed.length === 0, `step ${step}: apply failed ${result.failed.length}`);
    }
    if (step % 5 === 4) await expectLayoutMatches(table, model, `step ${step} layout`);
  }
  await expectFinds(table, model, keys, 'final');
  await expectExport(table, model, 'final export');
  const stats = await table.stats();
  expect(stats.size === model.size, `stats.size ${stats.size}, model ${model.size}`);
  if (growth) expect(stats.expansions > 0 && table.capacity > 64, `growth never happened: ${JSON.stringify(stats)}`);
  if (extra.windowBuckets !== undefined) {
    const { windows } = await table.debugSnapshot();
    expect(windows >= 3, `the slots ended in ${windows} bindings, not several`);
  }
  table.destroy();
}

/** Reserved keys in host and device batches, by the op passes or the bulk build. */
async function refusesReserved(gpu: Gpu, rng: CheckContext['rng'], bulkInsert: 'never' | 'always'): Promise<void> {
  const table = await HiveTable.create(gpu, { capacity: 256, bulkInsert });
  const { keys: dk, values: dv } = await expectReservedKeysRefused(gpu, rng, table, RESERVED_KEYS, async (keys) => {
    const applyError = await thrown(() => table.apply({ ops: new Uint8Array(20), keys }));
    expect(applyError instanceof ReservedKeyError && applyError.applied === 'none', `apply accepted a reserved key: ${applyError}`);
  });
  let eraseError: unknown;
  await table.erase(dk).catch((e) => (eraseError = e));
  expect(eraseError instanceof ReservedKeyError && eraseError.firstIndex === 7 && eraseError.partial === 29, `device erase: ${eraseError}`);
  expect(table.size === 0, `device erase left ${table.size} keys`);
  dk.destroy();
  dv.destroy();
  table.destroy();
}

export const tableChecks = defineChecks('hive/table', [
  ...perVariant(
    'random insert/insertOrAssign/erase/find/apply sequences match a CPU model (with growth)',
    (ctx, v) => randomSequence(ctx, v, true),
    true,
  ),
  ...perVariant('random sequences match a CPU model in a large table (no growth)', (ctx, v) => randomSequence(ctx, v, false), true),
  // Slots in several storage bindings, as tables past one binding keep them on a GPU: windows of
  // a few buckets (test-only windowBuckets), so every kernel's accessors switch between windows,
  // growth reallocates from one buffer into windows and between window counts, and the stash
  // lines lie in the last window. Groups of one lane only: the windowed subgroup kernels compile
  // for about a minute on SwiftShader (the accessors are the same).
  ...[variants[1], bulkFallbackVariant].flatMap((v) => [
    {
      name: `${v.name}: slots in several bindings: random sequences match a CPU model (with growth, one buffer to 5 windows)`,
      // Bulk builds in parts of 128 keys, as batches whose records exceed a binding take them;
      // finds in window order, as over more than 2 GiB of slots.
      run: (ctx: CheckContext) =>
        randomSequence(ctx, v, true, { windowBuckets: 32 * powerOfTwoAtLeast(ctx.scale), bulkPartKeys: 128, windowOrder: 'always' }),
    },
    {
      name: `${v.name}: slots in several bindings: random sequences match a CPU model in a large table (3 windows)`,
      run: (ctx: CheckContext) =>
        randomSequence(ctx, v, false, { windowBuckets: 128 * powerOfTwoAtLeast(ctx.scale), windowOrder: 'always' }),
    },
  ]),
  {
    name: 'bulk build in parts: batches across many parts report their reserved keys by batch index and store the rest',
    async run({ gpu, rng, scale }) {
      // Parts of 64 keys: 1000 keys make about 16 parts; 16 parts and 3 keys end in a part of 3
      // keys, one of them reserved.
      for (const n of [1000 * scale + 37, 64 * 16 * scale + 3]) {
        const keys = universe(rng, n);
        const values = rng.u32Array(n);
        const reservedAt = [...new Set([n - 1, ...Array.from({ length: 24 }, () => rng.below(n))])].sort((a, b) => a - b);
        reservedAt.forEach((i, j) => {
          keys[i] = RESERVED_KEYS[j % RESERVED_KEYS.length] as number;
        });
        const model = new TableModel();
        const kept = keys.filter((_, i) => !reservedAt.includes(i));
        model.insert(
          kept,
          values.filter((_, i) => !reservedAt.includes(i)),
          false,
        );
        const table = await HiveTable.create(gpu, { capacity: 4 * n, bulkInsert: 'always', bulkPartKeys: 64, subgroups: false });
        const dk = gpu.upload(keys);
        const dv = gpu.upload(values);
        const encoder = gpu.device.createCommandEncoder();
        table.encodeInsert(encoder, dk.buffer, dv.buffer, n);
        gpu.submit([encoder.finish()]);
        const r = await table.sync();
        expectSameArrays(`n=${n}: refused batch indices`, r.refused, Uint32Array.from(reservedAt));
        expect(r.failed.length === 0 && r.size === model.size, `n=${n}: failed ${r.failed.length}, size ${r.size}, model ${model.size}`);
        await expectLayoutMatches(table, model, `n=${n}: device batch in parts`);
        // The host path: a host batch with no reserved key, in parts, assigning.
        const again = rng.u32Array(kept.length);
        const ir = await table.insertOrAssign(kept, again);
        model.insert(kept, again, true);
        expect(ir.failed.length === 0, `n=${n}: insertOrAssign in parts failed ${ir.failed.length}`);
        await expectFinds(table, model, kept, `n=${n}: after insertOrAssign in parts`);
        dk.destroy();
        dv.destroy();
        table.destroy();
      }
    },
  },
  ...perVariant(
    'duplicate keys in one batch: one of their values is stored; insert keeps, insertOrAssign overwrites',
    async ({ gpu, rng, scale }, v) => {
      const table = await createTable(gpu, v, { capacity: 2048 * scale });
      const model = new TableModel();
      const keys = universe(rng, 60 * scale);
      for (const assign of [false, false, true, false, true]) {
        const batch = pick(rng, keys, 500 * scale);
        const values = rng.u32Array(batch.length);
        const r = assign ? await table.insertOrAssign(batch, values) : await table.insert(batch, values);
        const before = model.size;
        const allowed = model.insert(batch, values, assign);
        expect(r.inserted === model.size - before, `inserted ${r.inserted}, model ${model.size - before}`);
        const { values: got, found } = await table.find(batch);
        expectMatchesModel(batch, found, got, model, allowed);
        await expectLayoutMatches(table, model, `assign=${assign}`);
      }
      table.destroy();
    },
    true,
  ),
  {
    name: 'reserved keys are refused with a ReservedKeyError naming the index, and nothing is applied',
    async run({ gpu, rng }) {
      for (const bulkInsert of ['never', 'always'] as const) await refusesReserved(gpu, rng, bulkInsert);
    },
  },
  ...perVariant(
    'mixed batches: conflicting ops on hot keys return only stored values and never duplicate a key',
    async ({ gpu, rng, scale }, v) => {
      const table = await createTable(gpu, v, { capacity: 4096 * scale });
      const keys = universe(rng, 64);
      const stored = new Map<number, Set<number>>(Array.from(keys, (k) => [k, new Set<number>()]));
      for (let round = 0; round < 6; round++) {
        const n = 3000 * scale;
        const batchKeys = pick(rng, keys, n);
        const ops = Uint8Array.from(batchKeys, () => rng.below(4));
        const values = Uint32Array.from(batchKeys, (k) => fmix32(k ^ rng.below(8)));
        batchKeys.forEach((k, i) => {
          if ((ops[i] as number) <= Op.insertOrAssign) stored.get(k)?.add(values[i] as number);
        });
        const r = await table.apply({ ops, keys: batchKeys, values });
        expect(r.failed.length === 0, `round ${round}: ${r.failed.length} inserts failed`);
        for (let i = 0; i < n; i++) {
          if (ops[i] !== Op.find || r.status[i] === 0) continue;
          const k = batchKeys[i] as number;
          expect(
            stored.get(k)?.has(r.values[i] as number) ?? false,
            `round ${round}: find of 0x${k.toString(16)} returned ${r.values[i]}, never stored`,
          );
        }
        const layout = await checkLayout(table, `round ${round}`);
        for (const [k, val] of layout.pairs)
          expect(stored.get(k)?.has(val) ?? false, `round ${round}: 0x${k.toString(16)} holds ${val}, never stored`);
        expect(layout.pairs.size === table.size, `round ${round}: ${layout.pairs.size} keys stored, size ${table.size}`);
      }
      table.destroy();
    },
  ),
  ...perVariant(
    'device-resident batches in and out match host batches',
    async ({ gpu, rng, scale }, v) => {
      const table = await createTable(gpu, v, { capacity: 1024 });
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
      // The device-side API: encode without host round trips, then sync.
      const half = keys.length >> 1;
      const encoder = gpu.device.createCommandEncoder();
      table.encodeErase(encoder, probe.buffer, half);
      gpu.submit([encoder.finish()]);
      await table.sync();
      expect(table.size === keys.length - half, `after encodeErase + sync: size ${table.size}`);
      const again = gpu.device.createCommandEncoder();
      table.encodeInsert(again, dk.buffer, dv.buffer, keys.length, { assign: true });
      gpu.submit([again.finish()]);
      // A host call after device encodes reads the counters back first.
      const all = await table.retrieveAll();
      expect(all.keys.length === keys.length, `retrieveAll after encodeInsert: ${all.keys.length}`);
      // A mixed batch on the device: finds of the first half, erases of the second, one bad op code.
      const ops = Uint32Array.from(keys, (_, i) => (i < half ? 2 : 3));
      ops[5] = 9;
      const dops = gpu.upload(ops);
      let opError: unknown;
      await table.apply({ ops: dops, keys: probe, values: dv }).catch((e) => (opError = e));
      expect(opError instanceof InvalidOpError && opError.index === 5 && opError.op === 9, `device apply with a bad op: ${opError}`);
      // Like every device batch, the other ops were applied: the second half is gone.
      expect(table.size === half, `size ${table.size} after the device apply erased ${keys.length - half}`);
      gpu.write(dops.buffer, ops.fill(Op.find));
      const mixed = await table.apply({ ops: dops, keys: probe });
      const pairs = await gpu.download(mixed.out);
      for (let i = 0; i < keys.length; i++) {
        const want = i < half ? [values[i], 1] : [0, 0];
        expect(pairs[2 * i] === want[0] && pairs[2 * i + 1] === want[1], `device apply op ${i}: (${pairs[2 * i]}, ${pairs[2 * i + 1]})`);
      }
      mixed.out.destroy();
      dops.destroy();
      expect((await table.erase(probe)) === half, 'device erase count');
      expect(table.size === 0, `size ${table.size} after erasing everything`);
      for (const a of [dk, dv, probe, out.values, out.found]) a.destroy();
      table.destroy();
    },
    true,
  ),
  {
    name: 'misuse gets typed errors: mismatched lengths, bad options, use after destroy',
    async run({ gpu }) {
      const table = await HiveTable.create(gpu, { capacity: 64 });
      let error: unknown;
      await table.insert(new Uint32Array(3), new Uint32Array(2)).catch((e) => (error = e));
      expect(error instanceof InvalidArgumentError && /3 entries but values has 2/.test(error.message), `lengths: ${error}`);
      error = undefined;
      await table.apply({ ops: new Uint8Array(2), keys: new Uint32Array(3) }).catch((e) => (error = e));
      expect(error instanceof InvalidArgumentError, `apply lengths: ${error}`);
      for (const bad of [{ capacity: 0 }, { capacity: 64, maxEvictions: 17 }, { capacity: 64, minLoadFactor: 0.95 }]) {
        error = undefined;
        await HiveTable.create(gpu, bad).catch((e) => (error = e));
        expect(error instanceof InvalidArgumentError, `options ${JSON.stringify(bad)}: ${error}`);
      }
      table.destroy();
      error = undefined;
      await table.find(new Uint32Array([1])).catch((e) => (error = e));
      expect(error instanceof DestroyedError, `after destroy: ${error}`);
    },
  },
  ...perVariant(
    'batches larger than one op chunk: the chunks run in turn, failures are reported across all of them',
    async ({ gpu, rng }, v) => {
      const table = await createTable(gpu, v, { capacity: 64 * 32, growth: false, opChunk: 700 });
      const model = new TableModel();
      const keys = universe(rng, 5000);
      // 2048 slots and 32 stash slots: ~2750 distinct keys in six chunks overflow; every failure is reported.
      const batch = pick(rng, keys, 4000);
      const values = rng.u32Array(batch.length);
      const r = await table.insertOrAssign(batch, values);
      const failed = new Set(r.failed);
      expect(r.failed.length > 0 && r.failed.length === failed.size, `failed ${r.failed.length} (distinct ${failed.size})`);
      const allowed = new Map<number, Set<number>>();
      for (let i = 0; i < batch.length; i++) {
        if (failed.has(i)) continue;
        const k = batch[i] as number;
        let a = allowed.get(k);
        if (!a) allowed.set(k, (a = new Set()));
        a.add(values[i] as number);
      }
      const layout = await checkLayout(table, 'chunked');
      expect(
        layout.pairs.size === table.size && table.size === r.inserted,
        `size ${table.size}, inserted ${r.inserted}, stored ${layout.pairs.size}`,
      );
      for (const [k, val] of layout.pairs) expect(allowed.get(k)?.has(val) ?? false, `0x${k.toString(16)} holds ${val}`);
      // Nothing lost: a key not reported failed is stored.
      for (const k of allowed.keys()) expect(layout.pairs.has(k), `0x${k.toString(16)} was neither stored nor reported`);
      // A key reported failed is absent unless another copy of it in the batch got in.
      for (const i of failed) {
        const k = batch[i] as number;
        expect(!layout.pairs.has(k) || allowed.has(k), `failed key 0x${k.toString(16)} is stored`);
      }
      for (const k of allowed.keys()) model.map.set(k, layout.pairs.get(k) as number);
      // The device-side API runs all chunks in one encoder.
      const more = Uint32Array.from(new Set(pick(rng, keys, 1500)));
      const ops = Uint32Array.from(more, () => Op.find);
      const dops = gpu.upload(ops);
      const dkeys = gpu.upload(more);
      const dvals = gpu.upload(new Uint32Array(more.length));
      const out = gpu.createArray('u32', 2 * more.length);
      const encoder = gpu.device.createCommandEncoder();
      table.encodeApply(encoder, dops.buffer, dkeys.buffer, dvals.buffer, more.length, out.buffer);
      gpu.submit([encoder.finish()]);
      const got = await gpu.download(out);
      for (let i = 0; i < more.length; i++) {
        const k = more[i] as number;
        const want = model.map.get(k);
        expect(got[2 * i + 1] === (want === undefined ? 0 : 1) && got[2 * i] === (want ?? 0), `chunked find of 0x${k.toString(16)}`);
      }
      for (const a of [dops, dkeys, dvals, out]) a.destroy();
      table.destroy();
    },
    true,
  ),
  ...perVariant('mixed batches on distinct keys give the sequential outcome', async ({ gpu, rng, scale }, v) => {
    const table = await createTable(gpu, v, { capacity: 4096 * scale });
    const model = new TableModel();
    const keys = universe(rng, 4000 * scale);
    const seed = keys.subarray(0, 1200 * scale);
    const seedValues = rng.u32Array(seed.length);
    await table.insert(seed, seedValues);
    model.insert(seed, seedValues, false);
    const n = 2400 * scale;
    const batchKeys = Uint32Array.from(shuffle(rng, [...keys]).slice(0, n));
    const ops = Uint8Array.from(batchKeys, () => rng.below(4));
    const values = rng.u32Array(n);
    const result = await table.apply({ ops, keys: batchKeys, values });
    expectApplyMatchesModel(ops, batchKeys, values, result, model, 'apply');
    await expectLayoutMatches(table, model, 'after apply');
    table.destroy();
  }),
]);
