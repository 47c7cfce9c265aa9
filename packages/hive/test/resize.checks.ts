import { LimitExceededError } from '@gpuhash/core';
import { defineChecks, TableModel } from '@gpuhash/testing';
import { HiveTable, HOME_SLOTS, HOMES, homeOf, splitPointerFor } from '../src';
import { checkLayout, expectLayoutMatches } from './invariants';
import { keysInBuckets, keysWhere, pick, universe } from './keys';
import { createTable, expect, expectExport, perVariant } from './table.checks';

export const resizeChecks = defineChecks('hive/resize', [
  ...perVariant(
    'growth from one bucket through several rounds, in small split batches, keeps every key in a candidate bucket',
    async ({ gpu, rng, scale }, v) => {
      const table = await createTable(gpu, v, { capacity: 32, resizeBatch: 3 });
      const model = new TableModel();
      const keys = universe(rng, 6000 * scale);
      let rounds = 0;
      let lastRound = table.splitPointer.n0;
      for (let at = 0; at < keys.length; ) {
        const n = Math.min(keys.length - at, 1 + rng.below(900 * scale));
        const batch = keys.subarray(at, at + n);
        at += n;
        const r = await table.insert(batch, batch);
        model.insert(batch, batch, false);
        expect(r.inserted === n && r.failed.length === 0, `inserted ${r.inserted} of ${n}, failed ${r.failed.length}`);
        expect(table.loadFactor <= table.maxLoadFactor, `load ${table.loadFactor} above the threshold after growth`);
        if (table.splitPointer.n0 !== lastRound) rounds++;
        lastRound = table.splitPointer.n0;
        await expectLayoutMatches(table, model, `after ${at} keys (${table.buckets} buckets, split pointer ${table.splitPointer.split})`);
      }
      const stats = await table.stats();
      expect(rounds >= 3 && stats.expansions > 10, `expected several rounds of small batches: ${rounds} rounds, ${JSON.stringify(stats)}`);
      await expectExport(table, model, 'export');
      table.destroy();
    },
  ),
  ...perVariant(
    'churn: erases contract the table (merges from the top), inserts expand it again, nothing is lost',
    async ({ gpu, rng, scale }, v) => {
      const table = await createTable(gpu, v, { capacity: 256, resizeBatch: 16 });
      const model = new TableModel();
      const keys = universe(rng, 8000 * scale);
      let peak = 0;
      for (let cycle = 0; cycle < 3; cycle++) {
        const r = await table.insert(keys, keys);
        model.insert(keys, keys, false);
        expect(r.failed.length === 0, `cycle ${cycle}: ${r.failed.length} failed`);
        peak = Math.max(peak, table.buckets);
        await expectLayoutMatches(table, model, `cycle ${cycle} grown`);
        // Erase in steps: each step below the lower threshold merges buckets.
        for (let step = 0; step < 4; step++) {
          const gone = pick(rng, keys, 3000 * scale);
          const erased = await table.erase(gone);
          expect(erased === model.erase(gone), `cycle ${cycle} step ${step}: erase count`);
          await expectLayoutMatches(table, model, `cycle ${cycle} step ${step} (${table.buckets} buckets)`);
        }
        expect(table.buckets < peak, `cycle ${cycle}: no contraction (${table.buckets} buckets, peak ${peak})`);
        expect(table.buckets >= 8, `cycle ${cycle}: contracted below the initial capacity`);
      }
      const stats = await table.stats();
      expect(stats.contractions > 0 && stats.bucketsMerged > 0, `no merges: ${JSON.stringify(stats)}`);
      table.destroy();
    },
  ),
  {
    name: 'reserve expands ahead and sets the floor; shrinkToFit contracts and frees memory; past the device limit is a typed error',
    async run({ gpu, rng, scale }) {
      const table = await HiveTable.create(gpu, { capacity: 64 });
      await table.reserve(10_000 * scale);
      expect(table.capacity * table.maxLoadFactor >= 10_000 * scale, `reserve gave ${table.capacity} slots`);
      const keys = universe(rng, 2000 * scale);
      const model = new TableModel();
      model.insert(keys, keys, false);
      await table.insert(keys, keys);
      // The reserved capacity survives erases.
      const reserved = table.buckets;
      await table.erase(keys.subarray(0, 1000 * scale));
      model.erase(keys.subarray(0, 1000 * scale));
      expect(table.buckets === reserved, `erases shrank a reserved table to ${table.buckets} buckets`);
      await table.shrinkToFit();
      const stats = await table.stats();
      expect(stats.buckets < reserved && stats.loadFactor <= table.maxLoadFactor, `shrinkToFit: ${JSON.stringify(stats)}`);
      expect(stats.allocatedBuckets === stats.buckets && stats.reallocations >= 2, `memory not released: ${JSON.stringify(stats)}`);
      await expectLayoutMatches(table, model, 'after shrinkToFit');
      let error: unknown;
      await table.reserve(2 ** 40).catch((e) => (error = e));
      expect(error instanceof LimitExceededError, `reserve(2^40): ${error}`);
      error = undefined;
      await HiveTable.create(gpu, { capacity: 2 ** 40 }).catch((e) => (error = e));
      expect(error instanceof LimitExceededError && /maxStorageBuffersPerShaderStage/.test(String(error)), `create(2^40): ${error}`);
      table.destroy();
    },
  },
  ...perVariant('stashed keys are reinserted at the next resize', async ({ gpu, rng }, v) => {
    const table = await createTable(gpu, v, { capacity: 64 * 32 });
    const keys = keysInBuckets(rng, splitPointerFor(64), new Set([5, 6]), 80);
    const r = await table.insert(keys, keys);
    expect(r.inserted === 80 && table.stashSize === 16, `inserted ${r.inserted}, stash ${table.stashSize}`);
    const model = new TableModel();
    model.insert(keys, keys, false);
    await expectLayoutMatches(table, model, 'stash in use');
    await table.reserve(64 * 32 * 3);
    expect(table.stashSize === 0, `the resize left ${table.stashSize} keys in the stash`);
    const layout = await expectLayoutMatches(table, model, 'after the resize');
    expect(layout.stashed.size === 0, 'stash not drained');
    table.destroy();
  }),
  ...perVariant('a split whose movers crowd one home fills it, places the rest past it and flags them', async ({ gpu, rng }, v) => {
    // One bucket; 24 keys of the last home (more than it holds) whose candidates are both bucket 1
    // once it is split off. In bucket 0, 8 of them sit at home and 16 in the lowest other slots;
    // the split moves them in slot order, so the 16 fill the new bucket's home first and the 8
    // that were at home (their away bits never set) must be placed past it and flagged by the split.
    const table = await createTable(gpu, v, { capacity: 32 });
    const last = HOMES - 1;
    const batch = keysWhere(rng, splitPointerFor(2), 600, (b1, b2) => b1 === 1 && b2 === 1)
      .filter((k) => homeOf(k) === last)
      .slice(0, 24);
    expect(batch.length === 24, `found ${batch.length} keys of home ${last}`);
    const model = new TableModel();
    await table.insert(batch, batch);
    model.insert(batch, batch, false);
    const before = await expectLayoutMatches(table, model, 'one bucket');
    expect(before.atHome === HOME_SLOTS, `${before.atHome} keys at home, expected its ${HOME_SLOTS} slots`);
    await table.reserve(64);
    const after = await expectLayoutMatches(table, model, 'after the split');
    expect(after.bucketLoad[1] === 24 && after.atHome === HOME_SLOTS, `bucket 1 holds ${after.bucketLoad[1]}, ${after.atHome} at home`);
    const found = await table.find(batch);
    expect(
      batch.every((k, i) => found.found[i] === 1 && found.values[i] === k),
      'a key placed past its home is not found',
    );
    table.destroy();
  }),
  ...perVariant(
    'a split places the movers crowded out of their home where claims would: past the home, in claim order',
    async ({ gpu, rng }, v) => {
      // Keys of home 2 whose candidates are both bucket 1 once it is split off, as many as there are
      // slots from home 2's first to the bucket's end. Inserted into one bucket they fill exactly
      // those slots (claim order); the split moves them all to bucket 1 in slot order: HOME_SLOTS of
      // them take home 2, the others the slots a claim would give them, the homes after it, so the
      // slots below home 2 stay free there too. (Taking the lowest spare slots, as splits did before,
      // fills slots 0 .. 7 and leaves the top ones free.)
      const table = await createTable(gpu, v, { capacity: 32 });
      const home = 2;
      const count = 32 - HOME_SLOTS * home;
      const below = (2 ** (HOME_SLOTS * home) - 1) >>> 0;
      const batch = keysWhere(rng, splitPointerFor(2), 1200, (b1, b2) => b1 === 1 && b2 === 1)
        .filter((k) => homeOf(k) === home)
        .slice(0, count);
      expect(batch.length === count, `found ${batch.length} keys of home ${home}`);
      const model = new TableModel();
      await table.insert(batch, batch);
      model.insert(batch, batch, false);
      const before = await table.debugSnapshot();
      expect(
        before.meta[0] === below,
        `before the split bucket 0's free mask is 0x${before.meta[0]?.toString(16)}, expected 0x${below.toString(16)}`,
      );
      await table.reserve(64);
      const after = await expectLayoutMatches(table, model, 'after the split');
      expect(after.bucketLoad[1] === count, `bucket 1 holds ${after.bucketLoad[1]}`);
      const snap = await table.debugSnapshot();
      expect(
        snap.meta[1] === below,
        `after the split bucket 1's free mask is 0x${snap.meta[1]?.toString(16)}, expected 0x${below.toString(16)}`,
      );
      const found = await table.find(batch);
      expect(
        batch.every((k, i) => found.found[i] === 1 && found.values[i] === k),
        'a mover placed past its home is not found',
      );
      table.destroy();
    },
  ),
  ...perVariant('a merge whose keys do not fit its base bucket aborts, and the table stays as it was', async ({ gpu, rng }, v) => {
    // 3 buckets: round of 2, bucket 0 split into 0 and 2. Keys of the pair {0, 2}, 40 of them, fill
    // both past what one bucket holds, so merging 2 back into 0 must abort.
    const table = await createTable(gpu, v, { capacity: 96, growth: false });
    const p = splitPointerFor(3);
    const keys = keysWhere(rng, p, 40, (b1, b2) => (b1 === 0 || b1 === 2) && (b2 === 0 || b2 === 2));
    const r = await table.insert(keys, keys);
    expect(r.inserted === 40, `inserted ${r.inserted}`);
    const model = new TableModel();
    model.insert(keys, keys, false);
    await table.shrinkToFit();
    const stats = await table.stats();
    expect(stats.buckets === 3 && stats.contractions >= 1 && stats.bucketsMerged === 0, `merge did not abort: ${JSON.stringify(stats)}`);
    await expectLayoutMatches(table, model, 'after the aborted merge');
    // With room, the same table contracts: erase most keys, shrink to one bucket.
    await table.erase(keys.subarray(0, 30));
    model.erase(keys.subarray(0, 30));
    await table.shrinkToFit();
    expect(table.buckets === 1, `shrinkToFit left ${table.buckets} buckets for 10 keys`);
    await expectLayoutMatches(table, model, 'one bucket');
    const layout = await checkLayout(table, 'one bucket');
    expect(layout.bucketLoad.length === 1, 'bucket count');
    table.destroy();
  }),
]);
