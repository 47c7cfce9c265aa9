import { type CheckContext, check, defineChecks, type GpuCheck, type Rng, universe } from '@gpuhash/testing';
import fc from 'fast-check';
import { Op, RESERVED_KEYS, SlabHashMap, SlabMultimap, type SlabOptions, SlabSet } from '../src';
import { readLayout } from './invariants';

/**
 * SlabHash's three modes against CPU models, with few buckets (chains of many slabs), a pool of a
 * few slabs that has to grow, erases, flushes and rehashes in between; after every command the
 * slabs are read back and SlabHash's invariants checked (see invariants.ts). Every check runs in
 * both cooperative variants: subgroup tiles, and groups of one invocation.
 */

/** fast-check runs: a few under SwiftShader, more on a GPU host. */
const runs = (base: number, scale: number) => Math.max(1, Math.round(base * Math.sqrt(scale)));

async function assertProperty<T>(property: fc.IAsyncProperty<T>, ctx: CheckContext, numRuns: number): Promise<void> {
  await fc.assert(property, { seed: ctx.rng.u32() | 0, numRuns, interruptAfterTimeLimit: 20_000 * ctx.scale });
}

type Variant = { subgroups: boolean };
const variants = (ctx: CheckContext): Variant[] =>
  ctx.gpu.subgroups.supported ? [{ subgroups: true }, { subgroups: false }] : [{ subgroups: false }];

/** Small tables: `buckets` buckets and a one-slab pool, so chains are long and the pool grows. */
function small(v: Variant, buckets: number, extra: Partial<SlabOptions> = {}): SlabOptions {
  return { capacity: 16, buckets, poolSlabs: 1, subgroups: v.subgroups, ...extra };
}

const valuesFor = (rng: Rng, n: number) => rng.u32Array(n);

// ---- map ---------------------------------------------------------------------------------------

type MapCommand =
  | { op: 'insert' | 'insertOrAssign'; picks: number[] }
  | { op: 'erase'; picks: number[] }
  | { op: 'apply'; picks: number[]; codes: number[] }
  | { op: 'flush' | 'rehash' | 'clear' };

const picks = (pool: number, max: number) => fc.array(fc.nat(pool - 1), { minLength: 0, maxLength: max });
function mapCommands(pool: number, max: number): fc.Arbitrary<MapCommand[]> {
  const command: fc.Arbitrary<MapCommand> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ op: fc.constantFrom('insert' as const, 'insertOrAssign' as const), picks: picks(pool, max) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('erase' as const), picks: picks(pool, max) }) },
    {
      weight: 2,
      arbitrary: picks(pool, max).chain((p) =>
        fc.record({
          op: fc.constant('apply' as const),
          picks: fc.constant(p),
          codes: fc.array(fc.nat(3), { minLength: p.length, maxLength: p.length }),
        }),
      ),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('flush' as const, 'rehash' as const, 'clear' as const) }) },
  );
  return fc.array(command, { minLength: 1, maxLength: 10 });
}

/** Runs map or set commands against a Map model; mixed batches use distinct keys, so their outcome is sequential. */
async function runMapCommands(
  table: SlabHashMap | SlabSet,
  commands: MapCommand[],
  keys: Uint32Array,
  rng: Rng,
  set: boolean,
): Promise<void> {
  const model = new Map<number, number>();
  for (const [c, cmd] of commands.entries()) {
    const what = `command ${c} (${cmd.op})`;
    if (cmd.op === 'insert' || cmd.op === 'insertOrAssign') {
      const batch = Uint32Array.from(cmd.picks, (p) => keys[p] as number);
      const values = valuesFor(rng, batch.length);
      const r = cmd.op === 'insert' || set ? await table.insert(batch, values) : await table.insertOrAssign(batch, values);
      check(r.failed.length === 0, `${what}: ${r.failed.length} failed with growth on`);
      const fresh = new Set<number>();
      // Duplicates in a batch: one of their values is stored; read the winner back below.
      batch.forEach((k) => {
        if (!model.has(k)) fresh.add(k);
      });
      check(r.inserted === fresh.size, `${what}: inserted ${r.inserted}, the model adds ${fresh.size}`);
      const f = await table.find(batch);
      batch.forEach((k, i) => {
        const candidates = new Set<number>();
        batch.forEach((k2, j) => {
          if (k2 === k) candidates.add(set ? 0 : (values[j] as number));
        });
        const keep = model.get(k);
        const expectOld = cmd.op === 'insert' && keep !== undefined;
        const got = f.values[i] as number;
        check(f.found[i] === 1, `${what}: key 0x${k.toString(16)} not found after its insert`);
        if (set) check(got === 0, `${what}: a set's find returned value ${got}`);
        else if (expectOld) check(got === keep, `${what}: insert replaced 0x${k.toString(16)}'s value ${keep} with ${got}`);
        else check(candidates.has(got), `${what}: 0x${k.toString(16)} holds ${got}, none of its batch values`);
      });
      batch.forEach((k, i) => {
        model.set(k, f.values[i] as number);
      });
    } else if (cmd.op === 'erase') {
      const batch = Uint32Array.from(cmd.picks, (p) => keys[p] as number);
      const distinct = new Set(batch);
      const expected = [...distinct].filter((k) => model.has(k)).length;
      const erased = await table.erase(batch);
      check(erased === expected, `${what}: erased ${erased}, the model ${expected}`);
      for (const k of distinct) model.delete(k);
    } else if (cmd.op === 'apply') {
      // One op per distinct key: the sequential outcome is then the only one.
      const seen = new Set<number>();
      const batch: number[] = [];
      const codes: number[] = [];
      cmd.picks.forEach((p, i) => {
        const k = keys[p] as number;
        if (seen.has(k)) return;
        seen.add(k);
        batch.push(k);
        codes.push(cmd.codes[i] as number);
      });
      const values = valuesFor(rng, batch.length);
      const r = await table.apply({ ops: Uint8Array.from(codes), keys: Uint32Array.from(batch), values });
      check(r.failed.length === 0, `${what}: ${r.failed.length} failed`);
      batch.forEach((k, i) => {
        const op = codes[i] as number;
        const had = model.has(k);
        const expectStatus = op === Op.find || op === Op.erase ? (had ? 1 : 0) : had ? 0 : 1;
        check(r.status[i] === expectStatus, `${what}: op ${op} on 0x${k.toString(16)} status ${r.status[i]}, the model ${expectStatus}`);
        if (op === Op.find && had)
          check(r.values[i] === model.get(k), `${what}: find of 0x${k.toString(16)} gave ${r.values[i]}, the model ${model.get(k)}`);
        if (op === Op.erase) model.delete(k);
        if (op === Op.insert && !had) model.set(k, set ? 0 : (values[i] as number));
        if (op === Op.insertOrAssign) model.set(k, set ? 0 : (values[i] as number));
      });
    } else if (cmd.op === 'flush') {
      await table.flush();
      check(table.tombstones === 0, `${what}: ${table.tombstones} tombstones left`);
    } else if (cmd.op === 'rehash') {
      await table.rehash(1 + rng.below(5));
    } else {
      await table.clear();
      model.clear();
    }
    check(table.size === model.size, `${what}: size ${table.size}, the model ${model.size}`);
    const layout = await readLayout(table, what);
    check(layout.entries.length === model.size, `${what}: the slabs hold ${layout.entries.length} keys, the model ${model.size}`);
    for (const [k, v] of layout.entries)
      check(model.get(k) === v, `${what}: the slabs hold 0x${k.toString(16)} -> ${v}, the model ${model.get(k)}`);
  }
}

const mapCheck = (name: string, set: boolean): GpuCheck => ({
  name,
  run: async (ctx) => {
    const keys = universe(ctx.rng, 120 * ctx.scale, RESERVED_KEYS);
    for (const v of variants(ctx)) {
      const property = fc.asyncProperty(
        mapCommands(keys.length, 40 * ctx.scale),
        fc.integer({ min: 1, max: 3 }),
        async (commands, buckets) => {
          const table = set ? await SlabSet.create(ctx.gpu, small(v, buckets)) : await SlabHashMap.create(ctx.gpu, small(v, buckets));
          try {
            await runMapCommands(table, commands, keys, ctx.rng, set);
          } finally {
            table.destroy();
          }
        },
      );
      await assertProperty(property, ctx, runs(12, ctx.scale));
    }
  },
});

// ---- multimap ----------------------------------------------------------------------------------

type MultiCommand = { op: 'insert' | 'erase' | 'eraseAll' | 'count' | 'findAll'; picks: number[] } | { op: 'flush' };

function multiCommands(pool: number, max: number): fc.Arbitrary<MultiCommand[]> {
  const command: fc.Arbitrary<MultiCommand> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ op: fc.constant('insert' as const), picks: picks(pool, max) }) },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constantFrom('erase' as const, 'eraseAll' as const, 'count' as const, 'findAll' as const),
        picks: picks(pool, max),
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('flush' as const) }) },
  );
  return fc.array(command, { minLength: 1, maxLength: 10 });
}

/** Values per key as a sorted list (a multiset). */
function valuesByKey(entries: Array<[number, number]>): Map<number, number[]> {
  const m = new Map<number, number[]>();
  for (const [k, v] of entries) m.set(k, [...(m.get(k) ?? []), v]);
  for (const list of m.values()) list.sort((x, y) => x - y);
  return m;
}

function isSubMultiset(small: number[], big: number[]): boolean {
  const left = [...big];
  for (const x of small) {
    const i = left.indexOf(x);
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

const multimapCheck: GpuCheck = {
  name: 'multimap: insert, erase (one copy), eraseAll, count, findAll and flush match a multiset model, long chains, a growing pool',
  run: async (ctx) => {
    const keys = universe(ctx.rng, 24 * ctx.scale, RESERVED_KEYS);
    for (const v of variants(ctx)) {
      const property = fc.asyncProperty(
        multiCommands(keys.length, 40 * ctx.scale),
        fc.integer({ min: 1, max: 3 }),
        async (commands, buckets) => {
          const table = await SlabMultimap.create(ctx.gpu, small(v, buckets));
          // key -> the values of its copies (a multiset, sorted)
          let model = new Map<number, number[]>();
          const total = () => [...model.values()].reduce((s, l) => s + l.length, 0);
          try {
            for (const [c, cmd] of commands.entries()) {
              const what = `command ${c} (${cmd.op})`;
              if (cmd.op === 'flush') {
                await table.flush();
              } else {
                const batch = Uint32Array.from(cmd.picks, (p) => keys[p] as number);
                if (cmd.op === 'insert') {
                  const values = valuesFor(ctx.rng, batch.length);
                  const r = await table.insert(batch, values);
                  check(
                    r.failed.length === 0 && r.inserted === batch.length,
                    `${what}: inserted ${r.inserted} of ${batch.length}, ${r.failed.length} failed`,
                  );
                  batch.forEach((k, i) => {
                    model.set(
                      k,
                      [...(model.get(k) ?? []), values[i] as number].sort((x, y) => x - y),
                    );
                  });
                } else if (cmd.op === 'count' || cmd.op === 'findAll') {
                  const counts = cmd.op === 'count' ? await table.count(batch) : (await table.findAll(batch)).counts;
                  batch.forEach((k, i) => {
                    check(
                      counts[i] === (model.get(k)?.length ?? 0),
                      `${what}: 0x${k.toString(16)} has ${counts[i]} copies, the model ${model.get(k)?.length ?? 0}`,
                    );
                  });
                  if (cmd.op === 'findAll') {
                    const r = await table.findAll(batch);
                    batch.forEach((k, i) => {
                      const got = Array.from(r.values.subarray(r.offsets[i], (r.offsets[i] as number) + (r.counts[i] as number))).sort(
                        (x, y) => x - y,
                      );
                      check(
                        JSON.stringify(got) === JSON.stringify(model.get(k) ?? []),
                        `${what}: findAll of 0x${k.toString(16)} gave [${got}], the model [${model.get(k) ?? []}]`,
                      );
                    });
                  }
                } else {
                  const before = valuesByKey((await readLayout(table, what)).entries);
                  const erased = cmd.op === 'erase' ? await table.erase(batch) : await table.eraseAll(batch);
                  // Expected: erase removes one copy per entry (while any is left); eraseAll every copy.
                  const removeCounts = new Map<number, number>();
                  for (const k of batch) removeCounts.set(k, (removeCounts.get(k) ?? 0) + 1);
                  let expected = 0;
                  for (const [k, times] of removeCounts) {
                    const have = model.get(k)?.length ?? 0;
                    expected += cmd.op === 'eraseAll' ? have : Math.min(have, times);
                  }
                  check(erased === expected, `${what}: erased ${erased}, the model ${expected}`);
                  // Which copies went is the chain's order: take the survivors from the slabs, checking
                  // they are the right number of copies of values that were there.
                  const after = valuesByKey((await readLayout(table, what)).entries);
                  for (const [k, times] of removeCounts) {
                    const had = before.get(k) ?? [];
                    const left = after.get(k) ?? [];
                    const want = cmd.op === 'eraseAll' ? 0 : Math.max(0, had.length - times);
                    check(left.length === want && isSubMultiset(left, had), `${what}: 0x${k.toString(16)} kept [${left}] of [${had}]`);
                  }
                  model = new Map([...model].map(([k, _l]) => [k, after.get(k) ?? []]));
                  for (const [k, l] of model) if (l.length === 0) model.delete(k);
                }
              }
              check(table.size === total(), `${what}: size ${table.size}, the model ${total()}`);
              const layout = valuesByKey((await readLayout(table, what)).entries);
              for (const [k, l] of model)
                check(
                  JSON.stringify(layout.get(k) ?? []) === JSON.stringify(l),
                  `${what}: 0x${k.toString(16)} holds [${layout.get(k) ?? []}], the model [${l}]`,
                );
            }
          } finally {
            table.destroy();
          }
        },
      );
      await assertProperty(property, ctx, runs(12, ctx.scale));
    }
  },
};

// ---- targeted checks ---------------------------------------------------------------------------

const tombstoneCheck: GpuCheck = {
  name: 'map: erase, then re-insert of keys sharing one chain, never stores a key twice (tombstones are not EMPTY)',
  run: async (ctx) => {
    for (const v of variants(ctx)) {
      const table = await SlabHashMap.create(ctx.gpu, small(v, 1));
      const keys = universe(ctx.rng, 100 * ctx.scale, RESERVED_KEYS);
      await table.insert(keys, valuesFor(ctx.rng, keys.length));
      // Erase every other key: holes all along the chain, while later keys live further on.
      const holes = keys.filter((_, i) => i % 2 === 0);
      check((await table.erase(holes)) === holes.length, 'erase count');
      // Re-insert everything: present keys must be found past the holes, never put into them.
      const r = await table.insertOrAssign(keys, valuesFor(ctx.rng, keys.length));
      check(r.inserted === holes.length, `re-insert added ${r.inserted}, expected ${holes.length}`);
      const layout = await readLayout(table, 're-insert');
      check(layout.entries.length === keys.length, `${layout.entries.length} entries for ${keys.length} keys`);
      await table.flush();
      const after = await readLayout(table, 'flush');
      check(
        after.tombstones === 0 && after.entries.length === keys.length,
        `after flush: ${after.tombstones} tombstones, ${after.entries.length} entries`,
      );
      table.destroy();
    }
  },
};

const poolCheck: GpuCheck = {
  name: 'pool: a one-slab pool grows and exactly the inserts that found no slab rerun; without growth they are reported, never lost or hung',
  run: async (ctx) => {
    for (const v of variants(ctx)) {
      const keys = universe(ctx.rng, 2000 * ctx.scale, RESERVED_KEYS);
      const values = valuesFor(ctx.rng, keys.length);
      const grows = await SlabHashMap.create(ctx.gpu, small(v, 4));
      const r = await grows.insert(keys, values);
      const stats = await grows.stats();
      check(r.failed.length === 0 && r.inserted === keys.length, `growth on: inserted ${r.inserted}, failed ${r.failed.length}`);
      check(stats.poolGrowths > 0, 'the pool never grew');
      const f = await grows.find(keys);
      check(
        f.found.every((x, i) => x === 1 && f.values[i] === values[i]),
        'growth on: a key is missing or wrong',
      );
      grows.destroy();
      const fixed = await SlabHashMap.create(ctx.gpu, small(v, 4, { growth: false, poolSlabs: 8 }));
      const r2 = await fixed.insert(keys, values);
      check(r2.failed.length > 0, 'growth off: a pool of 8 slabs took 2000 keys');
      check(
        r2.inserted + r2.failed.length === keys.length,
        `growth off: ${r2.inserted} inserted + ${r2.failed.length} failed != ${keys.length}`,
      );
      const failed = new Set(r2.failed);
      const f2 = await fixed.find(keys);
      keys.forEach((_, i) => {
        check(f2.found[i] === (failed.has(i) ? 0 : 1), `growth off: key ${i} found=${f2.found[i]} but failed=${failed.has(i)}`);
      });
      await readLayout(fixed, 'growth off');
      fixed.destroy();
    }
  },
};

const allocatorCheck: GpuCheck = {
  name: 'SlabAlloc: allocations are distinct pool slabs, an exhausted pool answers NONE, freed slabs are handed out again',
  run: async (ctx) => {
    for (const v of variants(ctx)) {
      const poolSlabs = 256 * ctx.scale;
      const table = await SlabHashMap.create(ctx.gpu, { capacity: 1, buckets: 1, poolSlabs, growth: false, subgroups: v.subgroups });
      const n = poolSlabs + 64;
      const out = ctx.gpu.createArray('u32', n, 'alloc.out');
      for (let round = 0; round < 2; round++) {
        const encoder = ctx.gpu.device.createCommandEncoder();
        table.encodeAllocate(encoder, n, out.buffer);
        ctx.gpu.submit([encoder.finish()]);
        const got = await ctx.gpu.download(out);
        const slabs = Array.from(got).filter((s) => s !== 0xffffffff);
        // The resident-block search gives up after its bounded tries: most of the pool, never more.
        check(
          slabs.length <= poolSlabs && slabs.length >= poolSlabs / 2,
          `round ${round}: ${slabs.length} of ${poolSlabs} slabs handed out`,
        );
        check(new Set(slabs).size === slabs.length, `round ${round}: a slab handed out twice`);
        check(
          slabs.every((s) => s >= 1 && s < 1 + poolSlabs),
          `round ${round}: a slab outside the pool`,
        );
        const free = ctx.gpu.device.createCommandEncoder();
        table.encodeFree(free, out.buffer, n);
        ctx.gpu.submit([free.finish()]);
      }
      const bitmap = new Uint32Array(await ctx.gpu.readBytes(table.bitmapBuffer, 0, table.bitmapBuffer.size));
      check(
        bitmap.every((w) => w === 0),
        'freed slabs are still marked in the bitmap',
      );
      out.destroy();
      table.destroy();
    }
  },
};

const deviceCountCheck: GpuCheck = {
  name: 'multimap: count from device keys, and encodeCount with a gather, match the host count and findAll',
  run: async (ctx) => {
    const table = await SlabMultimap.create(ctx.gpu, { capacity: 64, buckets: 3 });
    const keys = universe(ctx.rng, 50, RESERVED_KEYS);
    const batch = Uint32Array.from({ length: 400 * ctx.scale }, () => keys[ctx.rng.below(keys.length)] as number);
    await table.insert(batch, valuesFor(ctx.rng, batch.length));
    const host = await table.count(keys);
    const dk = ctx.gpu.upload(keys);
    const device = await table.count(dk);
    const got = await ctx.gpu.download(device);
    check(JSON.stringify([...got]) === JSON.stringify([...host]), `device counts [${got}] != host [${host}]`);
    const all = await table.findAll(keys);
    const offsets = ctx.gpu.upload(all.offsets);
    const values = ctx.gpu.createArray('u32', Math.max(1, all.values.length));
    const encoder = ctx.gpu.device.createCommandEncoder();
    table.encodeCount(encoder, dk.buffer, keys.length, device.buffer, { offsets: offsets.buffer, values: values.buffer });
    ctx.gpu.submit([encoder.finish()]);
    const gathered = await ctx.gpu.download(values, all.values.length);
    check(JSON.stringify([...gathered]) === JSON.stringify([...all.values]), 'encodeCount gathered other values than findAll');
    for (const a of [dk, device, offsets, values]) a.destroy();
    table.destroy();
  },
};

export const modeChecks = defineChecks('slab/modes', [
  mapCheck(
    'map: random insert, insertOrAssign, erase, apply, flush, rehash and clear sequences match the model, long chains, a growing pool',
    false,
  ),
  mapCheck('set: random insert, erase, apply, flush, rehash and clear sequences match a set model (31 keys a slab)', true),
  multimapCheck,
  tombstoneCheck,
  poolCheck,
  allocatorCheck,
  deviceCountCheck,
]);
