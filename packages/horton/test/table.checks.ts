import type { Gpu } from '@gpuhash/core';
import { type CheckContext, check, defineChecks } from '@gpuhash/testing';
import fc from 'fast-check';
import { bucketCountFor, type HortonMode, HortonTable, lookupModel, RESERVED_KEYS } from '../src';
import { checkLayout } from './invariants';
import { keysOnBuckets, keysWhere } from './keys';

/**
 * The table variants the checks run over: Horton with every batch through the bulk build, with
 * none (the fast pass), and without repatriation (each batch as 'auto' picks), and the BCHT baseline.
 */
export const VARIANTS: ReadonlyArray<{ name: string; mode: HortonMode; repatriate: boolean; bulkInsert: 'auto' | 'always' | 'never' }> = [
  { name: 'horton', mode: 'horton', repatriate: true, bulkInsert: 'always' },
  { name: 'horton, fast pass', mode: 'horton', repatriate: true, bulkInsert: 'never' },
  { name: 'horton, no repatriation', mode: 'horton', repatriate: false, bulkInsert: 'auto' },
  { name: 'bcht', mode: 'bcht', repatriate: true, bulkInsert: 'auto' },
];

const property = async (ctx: CheckContext, p: fc.IAsyncPropertyWithHooks<unknown[]> | fc.IAsyncProperty<unknown[]>, numRuns: number) => {
  await fc.assert(p, {
    seed: ctx.rng.u32() | 0,
    numRuns: Math.max(1, Math.round(numRuns * Math.sqrt(ctx.scale))),
    // Bounds shrinking, and the first run with it (it compiles the pipelines): 60 s.
    interruptAfterTimeLimit: 60_000 * ctx.scale,
  });
};

/** The CPU reference: a Map; a batch with duplicates leaves one of its values (the table's choice). */
class Model {
  readonly map = new Map<number, number>();
  insert(keys: Uint32Array, values: Uint32Array, assign: boolean, failed: ReadonlySet<number>): number {
    const batch = new Map<number, Set<number>>();
    keys.forEach((k, i) => {
      if (failed.has(i)) return;
      const s = batch.get(k) ?? new Set<number>();
      s.add(values[i] as number);
      batch.set(k, s);
    });
    let added = 0;
    for (const [k, vs] of batch) {
      if (!this.map.has(k)) {
        added++;
        this.map.set(k, -1); // one of vs: adopted from the table
        this.pending.set(k, vs);
      } else if (assign) this.pending.set(k, vs);
    }
    return added;
  }
  readonly pending = new Map<number, Set<number>>();
  erase(keys: Uint32Array): number {
    let n = 0;
    for (const k of new Set(keys)) if (this.map.delete(k)) n++;
    for (const k of keys) this.pending.delete(k);
    return n;
  }
  /** Compares a table's pairs with the model, adopting the table's choice among a batch's values. */
  expect(pairs: Map<number, number>, what: string): void {
    check(pairs.size === this.map.size, `${what}: the table holds ${pairs.size} keys, the model ${this.map.size}`);
    for (const [k, v] of this.map) {
      const got = pairs.get(k);
      check(got !== undefined, `${what}: key ${k} is lost`);
      const open = this.pending.get(k);
      if (open) {
        check(open.has(got as number), `${what}: key ${k} holds ${got}, not one of its batch values`);
        this.map.set(k, got as number);
        this.pending.delete(k);
      } else check(got === v, `${what}: key ${k} holds ${got}, expected ${v}`);
    }
  }
}

async function withTable<T>(gpu: Gpu, options: Parameters<typeof HortonTable.create>[1], body: (t: HortonTable) => Promise<T>): Promise<T> {
  const table = await HortonTable.create(gpu, options);
  try {
    return await body(table);
  } finally {
    table.destroy();
  }
}

type Command = { op: 'insert' | 'assign' | 'erase'; size: number; fresh: number };

const commandArb = fc.record({
  op: fc.constantFrom<'insert' | 'assign' | 'erase'>('insert', 'insert', 'assign', 'erase'),
  size: fc.integer({ min: 0, max: 400 }),
  fresh: fc.integer({ min: 0, max: 100 }),
});

/**
 * Runs commands against a table and the model: keys drawn from a pool (fresh ones with
 * probability `fresh`%), duplicates included; after each command the layout invariants hold and
 * the table's pairs equal the model's; failed keys (growth off) are absent.
 */
async function runCommands(table: HortonTable, ctx: CheckContext, pool: Uint32Array, commands: Command[], label: string): Promise<void> {
  const model = new Model();
  let cursor = 0;
  for (const [c, cmd] of commands.entries()) {
    const n = Math.round((cmd.size * ctx.scale * pool.length) / 4096);
    const keys = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const fresh = ctx.rng.below(100) < cmd.fresh && cursor < pool.length;
      keys[i] = fresh ? (pool[cursor++] as number) : (pool[ctx.rng.below(Math.max(1, cursor))] as number);
    }
    const what = `${label}, command ${c} (${cmd.op} of ${n})`;
    if (cmd.op === 'erase') {
      const erased = await table.erase(keys);
      const expected = model.erase(keys);
      check(erased === expected, `${what}: erased ${erased}, expected ${expected}`);
    } else {
      const values = ctx.rng.u32Array(n);
      const r = cmd.op === 'assign' ? await table.insertOrAssign(keys, values) : await table.insert(keys, values);
      const failed = new Set(r.failed);
      if (table.growth) check(failed.size === 0, `${what}: ${failed.size} failed with growth on`);
      const added = model.insert(keys, values, cmd.op === 'assign', failed);
      check(r.inserted === added, `${what}: inserted ${r.inserted}, the model added ${added}`);
      // A failed key is absent unless another copy of it was placed.
      const placed = new Set<number>();
      keys.forEach((k, i) => {
        if (!failed.has(i)) placed.add(k);
      });
      const f = await table.find(Uint32Array.from([...failed].map((i) => keys[i] as number).filter((k) => !placed.has(k))));
      check(
        f.found.every((x) => x === 0),
        `${what}: a key reported failed is present`,
      );
    }
    const layout = await checkLayout(table, what);
    model.expect(layout.pairs, what);
    check(table.size === model.map.size, `${what}: size ${table.size}, model ${model.map.size}`);
  }
}

const perVariant = (name: string, run: (ctx: CheckContext, v: (typeof VARIANTS)[number]) => Promise<void>) =>
  VARIANTS.map((v) => ({ name: `${v.name}: ${name}`, run: (ctx: CheckContext) => run(ctx, v) }));

export const tableChecks = defineChecks('horton/table', [
  ...perVariant(
    'random insert, insertOrAssign and erase batches match the model and keep the layout invariants (growth off, to full)',
    async (ctx, v) => {
      await property(
        ctx,
        fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 8 }), fc.constantFrom(1024, 2048), async (commands, capacity) => {
          const cap = capacity * ctx.scale;
          const pool = ctx.rng.distinctU32(Math.round(cap * 1.2), RESERVED_KEYS);
          await withTable(
            ctx.gpu,
            { capacity: cap, growth: false, mode: v.mode, repatriate: v.repatriate, bulkInsert: v.bulkInsert },
            (t) => runCommands(t, ctx, pool, commands, `capacity ${cap}`),
          );
        }),
        6,
      );
    },
  ),
  ...perVariant(
    'keys forced onto 1-4 primary buckets (long remap chains, shared remap entries) match the model, growth on',
    async (ctx, v) => {
      await property(
        ctx,
        fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(commandArb, { minLength: 1, maxLength: 6 }), async (hot, commands) => {
          const capacity = 1024;
          const buckets = Array.from({ length: hot }, () => ctx.rng.below(bucketCountFor(capacity)));
          const pool = keysOnBuckets(ctx.rng, capacity, buckets, 160 * ctx.scale);
          await withTable(ctx.gpu, { capacity, growth: true, mode: v.mode, repatriate: v.repatriate, bulkInsert: v.bulkInsert }, (t) =>
            runCommands(t, ctx, pool, commands, `${hot} hot buckets`),
          );
        }),
        5,
      );
    },
  ),
  ...perVariant('a table built to each load holds every key exactly; its layout invariants hold', async (ctx, v) => {
    const capacity = 8192 * ctx.scale;
    for (const load of [0.5, 0.9, 0.95]) {
      await withTable(ctx.gpu, { capacity, growth: false, mode: v.mode, repatriate: v.repatriate, bulkInsert: v.bulkInsert }, async (t) => {
        const n = Math.floor(load * t.capacity);
        const keys = ctx.rng.distinctU32(n, RESERVED_KEYS);
        const r = await t.insert(keys, keys);
        const layout = await checkLayout(t, `built to ${load}`);
        check(r.inserted + r.failed.length === n, `load ${load}: inserted ${r.inserted} + failed ${r.failed.length} != ${n}`);
        check(layout.pairs.size === r.inserted, `load ${load}: layout holds ${layout.pairs.size}, inserted ${r.inserted}`);
        // Horton: up to 0.9 every key fits (measured: builds reach about 0.95). BCHT's one-level
        // eviction leaves a key unplaced now and then at 0.9 (reported in failed, checked above).
        if (load <= (v.mode === 'bcht' ? 0.5 : 0.9)) check(r.failed.length === 0, `load ${load}: ${r.failed.length} keys failed`);
        for (const [k, val] of layout.pairs) check(val === k, `key ${k} holds ${val}`);
      });
    }
  }),
  {
    name: 'churn past load 0.9 with repatriation off (keys fail, primary keys pushed out): after every batch the table holds exactly the placed keys and every set entry is used',
    async run(ctx) {
      const capacity = 16_384 * ctx.scale;
      for (const load of [0.9, 0.93, 0.95]) {
        const n = Math.floor(load * capacity);
        const pool = ctx.rng.distinctU32(10 * n, RESERVED_KEYS);
        await withTable(ctx.gpu, { capacity, growth: false, repatriate: false }, async (t) => {
          let live = new Set<number>();
          let next = 0;
          const insert = async (keys: Uint32Array, what: string) => {
            const r = await t.insert(keys, keys);
            const failed = new Set(Array.from(r.failed, (i) => keys[i] as number));
            for (const k of keys) if (!failed.has(k)) live.add(k);
            const layout = await checkLayout(t, `load ${load}, ${what}`);
            check(layout.pairs.size === live.size, `load ${load}, ${what}: holds ${layout.pairs.size} keys, placed ${live.size}`);
            for (const k of live) check(layout.pairs.get(k) === k, `load ${load}, ${what}: key ${k} missing or wrong`);
          };
          await insert(pool.slice(0, n), 'build');
          next = n;
          // Erase half the keys, then insert as many new ones: buckets stay full, Type B buckets
          // accumulate, and the rounds run out of room for some keys (reported in failed).
          for (let c = 0; c < 10; c++) {
            const erase = [...live].filter((_, i) => (i + c) % 2 === 0);
            check((await t.erase(Uint32Array.from(erase))) === erase.length, `load ${load}, cycle ${c}: erase count`);
            const gone = new Set(erase);
            live = new Set([...live].filter((k) => !gone.has(k)));
            await insert(pool.slice(next, next + erase.length), `cycle ${c}`);
            next += erase.length;
          }
          // The rounds' last resort (push_primary) ran, and the layout held after every batch.
          check(t.primaryPushes > 0, `load ${load}: no primary key was pushed out`);
        });
      }
    },
  },
]);

/** Measured buckets per lookup against the model of geometry.ts (the paper's §6 for our packing). */
export const modelChecks = defineChecks('horton/model', [
  {
    name: 'buckets touched per lookup of random keys follow the model within 5% (hits and misses, loads 0.5 to 0.9)',
    async run(ctx) {
      const capacity = 16_384 * ctx.scale;
      for (const load of [0.5, 0.75, 0.9]) {
        await withTable(ctx.gpu, { capacity, growth: false }, async (t) => {
          const n = Math.floor(load * t.capacity);
          const keys = ctx.rng.distinctU32(n, RESERVED_KEYS);
          const r = await t.insert(keys, keys);
          check(r.failed.length === 0, `load ${load}: ${r.failed.length} failed`);
          const present = new Set(keys);
          const misses = keysWhere(ctx.rng, n, (k) => !present.has(k));
          const hit = await t.lookupCost(keys);
          const miss = await t.lookupCost(misses);
          const model = lookupModel(load);
          const what = `load ${load}: hits ${hit.bucketsPerHit.toFixed(4)} (model ${model.hit.toFixed(4)}), misses ${miss.bucketsPerMiss.toFixed(4)} (model ${model.miss.toFixed(4)})`;
          check(hit.hits === n && miss.misses === n, `${what}: ${hit.hits} hits of ${n}, ${miss.misses} misses of ${n}`);
          check(Math.abs(hit.bucketsPerHit / model.hit - 1) <= 0.05, `${what}: hits off the model by more than 5%`);
          check(Math.abs(miss.bucketsPerMiss / model.miss - 1) <= 0.05, `${what}: misses off the model by more than 5%`);
          const stats = await t.stats();
          check(Math.abs(stats.bucketsPerHit - hit.bucketsPerHit) < 1e-9, `${what}: stats().bucketsPerHit ${stats.bucketsPerHit}`);
          check(
            Math.abs(stats.bucketsPerHit - (1 + stats.remappedShare)) < 1e-9,
            `${what}: a hit reads 1 bucket, 2 for a remapped key: ${stats.bucketsPerHit} vs 1 + ${stats.remappedShare}`,
          );
          check(Math.abs(stats.typeBShare - model.typeB) <= 0.05, `${what}: Type B share ${stats.typeBShare}, model ${model.typeB}`);
        });
      }
    },
  },
  {
    name: 'BCHT baseline: every miss reads 2 buckets, hits between 1 and 2; Horton reads fewer for both at load 0.9',
    async run(ctx) {
      const capacity = 16_384 * ctx.scale;
      const n = Math.floor(0.9 * capacity);
      const keys = ctx.rng.distinctU32(n, RESERVED_KEYS);
      const present = new Set(keys);
      const misses = keysWhere(ctx.rng, n, (k) => !present.has(k));
      const cost = async (mode: HortonMode) =>
        withTable(ctx.gpu, { capacity, growth: false, mode }, async (t) => {
          // BCHT may leave a few keys unplaced at 0.9 (reported): hits are costed over the placed ones.
          const failed = new Set((await t.insert(keys, keys)).failed);
          check(failed.size <= (mode === 'bcht' ? n / 1000 : 0), `${mode}: ${failed.size} failures at load 0.9`);
          const placed = keys.filter((_, i) => !failed.has(i));
          return { hit: (await t.lookupCost(placed)).bucketsPerHit, miss: (await t.lookupCost(misses)).bucketsPerMiss };
        });
      const bcht = await cost('bcht');
      const horton = await cost('horton');
      const what = `BCHT ${JSON.stringify(bcht)}, Horton ${JSON.stringify(horton)}`;
      console.log(`buckets per lookup at load 0.9: ${what}`);
      // The paper's load-balancing baseline uses both functions alike: 1.5 buckets per hit, 2 per
      // miss (a table whose fast pass sent keys to first buckets first read 1.33 on a GPU).
      check(bcht.miss > 1.99 && bcht.hit > 1.4 && bcht.hit < 1.6, `${what}: BCHT off its shape`);
      check(horton.hit < bcht.hit && horton.miss < bcht.miss, `${what}: Horton does not read fewer buckets`);
    },
  },
  {
    name: 'delete-heavy churn at load 0.85: repatriation keeps lookups at least as cheap and Type B buckets fewer',
    async run(ctx) {
      const capacity = 16_384 * ctx.scale;
      const n = Math.floor(0.85 * capacity);
      const pool = ctx.rng.distinctU32(4 * n, RESERVED_KEYS);
      const cycles = 4;
      const churn = async (repatriate: boolean) =>
        withTable(ctx.gpu, { capacity, growth: false, repatriate }, async (t) => {
          let live = pool.slice(0, n);
          let next = n;
          check((await t.insert(live, live)).failed.length === 0, 'build failed');
          for (let c = 0; c < cycles; c++) {
            // Erase half the keys, then insert as many new ones.
            const erase = live.filter((_, i) => (i + c) % 2 === 0);
            check((await t.erase(erase)) === erase.length, `cycle ${c}: erase count`);
            const fresh = pool.slice(next, next + erase.length);
            next += erase.length;
            const r = await t.insert(fresh, fresh);
            check(r.failed.length === 0, `cycle ${c}: ${r.failed.length} failed`);
            live = Uint32Array.from([...live.filter((_, i) => (i + c) % 2 !== 0), ...fresh]);
          }
          const layout = await checkLayout(t, `after churn (repatriate ${repatriate})`);
          check(layout.pairs.size === live.length, 'lost keys');
          const hit = await t.lookupCost(live);
          const stats = await t.stats();
          const result = { hit: hit.bucketsPerHit, miss: stats.bucketsPerMiss, typeB: stats.typeBShare };
          console.log(`horton churn at load 0.85 (repatriate ${repatriate}): ${JSON.stringify(result)}`);
          return result;
        });
      const on = await churn(true);
      const off = await churn(false);
      const what = `repatriation on ${JSON.stringify(on)}, off ${JSON.stringify(off)}`;
      check(on.hit <= off.hit + 0.005, `${what}: hits cost more with repatriation`);
      check(on.miss <= off.miss + 0.01, `${what}: misses cost more with repatriation`);
      check(on.typeB <= off.typeB, `${what}: more Type B buckets with repatriation`);
    },
  },
]);
