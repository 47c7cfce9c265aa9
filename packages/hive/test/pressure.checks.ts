import { Op } from '@gpuhash/core';
import { defineChecks, TableModel } from '@gpuhash/testing';
import { candidateBuckets, HOME_SLOTS, homeOf, splitPointerFor } from '../src';
import { checkLayout, expectLayoutMatches } from './invariants';
import { keysInBuckets, keysWhere, shuffle } from './keys';
import { createTable, expect, perVariant } from './table.checks';

/** 64 buckets: one stash line of 32 slots. */
const BUCKETS = 64;
const HOT = new Set([0, 1, 2, 3]);

export const pressureChecks = defineChecks('hive/pressure', [
  ...perVariant(
    'keys confined to 4 buckets fill them, overflow into the stash, and a full stash reports exactly the pending keys',
    async ({ gpu, rng }, v) => {
      const table = await createTable(gpu, v, { capacity: BUCKETS * 32, growth: false });
      const keys = keysInBuckets(rng, splitPointerFor(BUCKETS), HOT, 200);
      const values = keys.map((k) => k ^ 0x5bd1e995);
      const r = await table.insert(keys, values);
      const stats = await table.stats();
      expect(r.inserted + r.failed.length === keys.length, `inserted ${r.inserted} + failed ${r.failed.length} != ${keys.length}`);
      expect(stats.stashSize === stats.stashCapacity, `the stash holds ${stats.stashSize} of ${stats.stashCapacity} with keys pending`);
      expect(stats.fullBuckets === 4, `${stats.fullBuckets} full buckets, expected the 4 hot ones`);
      expect(r.inserted === 128 + stats.stashCapacity, `inserted ${r.inserted}: 4 buckets and the stash should be full`);
      expect(stats.lockAcquisitions > 0 && stats.lockedInserts > 0, `the locked pass never ran: ${JSON.stringify(stats)}`);
      const failed = new Set(r.failed);
      const model = new TableModel();
      keys.forEach((k, i) => {
        if (!failed.has(i)) model.map.set(k, values[i] as number);
      });
      const layout = await expectLayoutMatches(table, model, 'after the overflow');
      // Lookups see stashed keys; erasing some of them makes room for exactly that many pending ones.
      const { found } = await table.find(keys);
      for (let i = 0; i < keys.length; i++)
        expect(found[i] === (failed.has(i) ? 0 : 1), `key ${i}: found ${found[i]}, failed ${failed.has(i)}`);
      const stashed = [...layout.stashed].slice(0, 10);
      expect((await table.erase(Uint32Array.from(stashed))) === 10, 'erasing 10 stashed keys');
      model.erase(stashed);
      const pending = Uint32Array.from(r.failed, (i) => keys[i] as number);
      const again = await table.insert(
        pending,
        Uint32Array.from(r.failed, (i) => values[i] as number),
      );
      expect(
        again.inserted === 10 && again.failed.length === pending.length - 10,
        `re-insert: ${again.inserted} in, ${again.failed.length} pending`,
      );
      const stillPending = new Set(again.failed);
      pending.forEach((k, i) => {
        if (!stillPending.has(i)) model.map.set(k, (k ^ 0x5bd1e995) >>> 0);
      });
      await expectLayoutMatches(table, model, 'after re-insert');
      // Replacing stashed keys works like any other: insertOrAssign finds them there.
      const inStash = [...(await checkLayout(table, 'stash')).stashed];
      await table.insertOrAssign(Uint32Array.from(inStash), new Uint32Array(inStash.length).fill(7));
      for (const k of inStash) model.map.set(k, 7);
      await expectLayoutMatches(table, model, 'after assigning stashed keys');
      table.destroy();
    },

    true,
  ),
  ...perVariant(
    'a full pair of buckets makes room by a two-step cuckoo path; a path bound of one sends the keys to the stash',
    async ({ gpu, rng }, v) => {
      const p = splitPointerFor(BUCKETS);
      const outside = (b: number) => b > 3;
      const used = new Set<number>();
      const take = (keys: Uint32Array) => {
        for (const k of keys) used.add(k);
        return keys;
      };
      // Buckets 2 and 3 hold keys whose other bucket is elsewhere; 0 and 1 hold keys whose other
      // bucket is 2 or 3; then keys of the pair {0, 1} must move a key of 0/1 into 2/3 and one of
      // 2/3 out: paths of two victims.
      const layers = [
        take(keysWhere(rng, p, 32, (b1, b2) => b1 === 2 && outside(b2), used)),
        take(keysWhere(rng, p, 32, (b1, b2) => b1 === 3 && outside(b2), used)),
        take(keysWhere(rng, p, 32, (b1, b2) => b1 === 0 && (b2 === 2 || b2 === 3), used)),
        take(keysWhere(rng, p, 32, (b1, b2) => b1 === 1 && (b2 === 2 || b2 === 3), used)),
      ];
      const pair = keysWhere(rng, p, 10, (b1, b2) => b1 <= 1 && b2 <= 1, used);
      for (const maxEvictions of [8, 1]) {
        const table = await createTable(gpu, v, { capacity: BUCKETS * 32, growth: false, maxEvictions });
        const model = new TableModel();
        for (const layer of layers) {
          await table.insert(layer, layer);
          model.insert(layer, layer, false);
        }
        const before = await table.stats();
        expect(before.fullBuckets === 4 && before.evictions === 0, `setup: ${JSON.stringify(before)}`);
        const r = await table.insert(pair, pair);
        model.insert(pair, pair, false);
        expect(r.inserted === pair.length && r.failed.length === 0, `maxEvictions ${maxEvictions}: inserted ${r.inserted}`);
        const stats = await table.stats();
        if (maxEvictions > 1) {
          expect(stats.evictions >= 2 * pair.length && stats.stashSize === 0, `two-step paths: ${JSON.stringify(stats)}`);
        } else {
          expect(stats.evictions === 0 && stats.stashSize === pair.length, `bound 1: ${JSON.stringify(stats)}`);
        }
        await expectLayoutMatches(table, model, `maxEvictions ${maxEvictions}`);
        table.destroy();
      }
    },
  ),
  ...perVariant(
    'a key away from its home is still found once its home has room again: insert keeps one copy, erase reaches it',
    async ({ gpu, rng }, v) => {
      const p = splitPointerFor(BUCKETS);
      for (let round = 0; round < 4; round++) {
        const table = await createTable(gpu, v, { capacity: BUCKETS * 32, growth: false });
        const model = new TableModel();
        // HOME_SLOTS + 1 keys of one home of bucket x: the last one lands away from its home.
        const x = 4 + round;
        const home = round % 4;
        const keys = Array.from(keysWhere(rng, p, HOME_SLOTS + 1, (b1, b2, k) => b1 === x && b2 !== x && homeOf(k) === home));
        const away = keys[HOME_SLOTS] as number;
        await table.insert(Uint32Array.from(keys.slice(0, HOME_SLOTS)), Uint32Array.from(keys.slice(0, HOME_SLOTS)));
        await table.insert(Uint32Array.of(away), Uint32Array.of(1));
        model.insert(keys, [...keys.slice(0, HOME_SLOTS), 1], false);
        // A home key goes: the home has an EMPTY slot while the away key is elsewhere in the bucket.
        await table.erase(Uint32Array.of(keys[0] as number));
        model.erase([keys[0] as number]);
        await expectLayoutMatches(table, model, `round ${round}: setup`);
        if (round % 2 === 0) {
          // Host insertOrAssign (by the bulk build in the bulk variant), then a mixed batch.
          const r = await table.insertOrAssign(Uint32Array.of(away), Uint32Array.of(2));
          expect(r.inserted === 0, `round ${round}: insertOrAssign of a present key inserted ${r.inserted}`);
          model.map.set(away, 2);
          await expectLayoutMatches(table, model, `round ${round}: after insertOrAssign`);
          const a = await table.apply({ ops: Uint8Array.of(Op.insert), keys: Uint32Array.of(away), values: Uint32Array.of(3) });
          expect(a.status[0] === 0, `round ${round}: a mixed batch inserted a present key again`);
          await expectLayoutMatches(table, model, `round ${round}: after the mixed insert`);
          const b = await table.apply({ ops: Uint8Array.of(Op.erase), keys: Uint32Array.of(away) });
          expect(b.status[0] === 1, `round ${round}: a mixed batch's erase did not find the key`);
          model.erase([away]);
        } else {
          const e = await table.erase(Uint32Array.of(away));
          expect(e === 1, `round ${round}: erase batch removed ${e}`);
          model.erase([away]);
        }
        await expectLayoutMatches(table, model, `round ${round}: after`);
        table.destroy();
      }
    },
    true,
  ),
  ...perVariant('with growth, the same keys all go in: the table expands and drains the stash', async ({ gpu, rng }, v) => {
    const table = await createTable(gpu, v, { capacity: BUCKETS * 32 });
    const keys = keysInBuckets(rng, splitPointerFor(BUCKETS), HOT, 400);
    const r = await table.insert(keys, keys);
    expect(r.inserted === keys.length && r.failed.length === 0, `inserted ${r.inserted}, failed ${r.failed.length}`);
    const model = new TableModel();
    for (const k of keys) model.map.set(k, k);
    await expectLayoutMatches(table, model, 'after growth');
    const stats = await table.stats();
    expect(stats.expansions > 0 && stats.buckets > BUCKETS, `no expansion: ${JSON.stringify(stats)}`);
    table.destroy();
  }),
  ...perVariant(
    'one new key inserted many times at once, with its first bucket filling up, is stored exactly once',
    async ({ gpu, rng }, v) => {
      const p = splitPointerFor(BUCKETS);
      const table = await createTable(gpu, v, { capacity: BUCKETS * 32, growth: false });
      const model = new TableModel();
      for (let round = 0; round < 6; round++) {
        const x = 8 + round;
        // 28 keys whose first bucket is x fill it to 28 slots; 8 new keys, also first-choice x with
        // another second bucket, each 24 times in one batch: the 4 free slots of x and the second
        // buckets are claimed concurrently by copies of one key.
        const filler: number[] = [];
        const racers: number[] = [];
        while (filler.length < 28 || racers.length < 8) {
          const k = rng.u32();
          if (k >= 0xfffffffe || model.map.has(k) || filler.includes(k) || racers.includes(k)) continue;
          const [b1, b2] = candidateBuckets(k, p);
          if (b1 !== x || b2 === x) continue;
          if (filler.length < 28) filler.push(k);
          else racers.push(k);
        }
        await table.insert(Uint32Array.from(filler), Uint32Array.from(filler));
        model.insert(filler, filler, false);
        const batch = shuffle(
          rng,
          racers.flatMap((k) => Array.from({ length: 24 }, () => k)),
        );
        const values = batch.map((k, i) => (k ^ i) >>> 0);
        const assign = round % 2 === 1;
        const r = assign
          ? await table.insertOrAssign(Uint32Array.from(batch), Uint32Array.from(values))
          : await table.insert(Uint32Array.from(batch), Uint32Array.from(values));
        expect(r.inserted === 8 && r.failed.length === 0, `round ${round}: inserted ${r.inserted}, failed ${r.failed.length}`);
        const layout = await checkLayout(table, `round ${round}`);
        for (const k of racers) {
          const got = layout.pairs.get(k);
          expect(
            got !== undefined && batch.some((b, i) => b === k && values[i] === got),
            `round ${round}: 0x${k.toString(16)} holds ${got}`,
          );
          model.map.set(k, got as number);
        }
        await expectLayoutMatches(table, model, `round ${round}`);
      }
      table.destroy();
    },
  ),
]);
