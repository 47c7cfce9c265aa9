import {
  DestroyedError,
  DeviceArray,
  GpuOutOfMemoryError,
  InvalidArgumentError,
  LimitExceededError,
  ReservedKeyError,
  requestGpu,
} from '@gpuhash/core';
import { type CheckContext, createOutOfMemory, defineChecks, thrown } from '@gpuhash/testing';
import fc from 'fast-check';
import { type EvictResult, HkvCache, type HkvOptions, HkvStatus, RESERVED_KEYS, type ScorePolicy } from '../src';
import {
  checkProperty,
  emptyDigestPool,
  expect,
  expectBatchInvariants,
  expectModel,
  expectStatuses,
  keyPool,
  rows,
  sameRow,
  sizeScale,
  skewedPool,
  snapshot,
} from './helpers';
import { CacheModel } from './model';

type Command =
  | { op: 'insertOrAssign' | 'insertAndEvict' | 'assign' | 'assignValues' | 'findOrInsert'; keys: number[] }
  | { op: 'assignScores' | 'find' | 'contains' | 'erase'; keys: number[] }
  | { op: 'accumOrAssign'; keys: number[]; flags: number[] }
  | { op: 'eraseIf'; lo: number; hi: number }
  | { op: 'exportRange'; from: number; count: number }
  | { op: 'clear' };

function commands(pool: number, maxBatch: number): fc.Arbitrary<Command[]> {
  const keys = fc.array(fc.nat({ max: pool - 1 }), { minLength: Math.floor(maxBatch / 4), maxLength: maxBatch, size: 'max' });
  const command: fc.Arbitrary<Command> = fc.oneof(
    { weight: 16, arbitrary: keys.map((k) => ({ op: 'insertOrAssign' as const, keys: k })) },
    { weight: 14, arbitrary: keys.map((k) => ({ op: 'insertAndEvict' as const, keys: k })) },
    { weight: 3, arbitrary: keys.map((k) => ({ op: 'find' as const, keys: k })) },
    { weight: 1, arbitrary: keys.map((k) => ({ op: 'contains' as const, keys: k })) },
    { weight: 2, arbitrary: keys.map((k) => ({ op: 'erase' as const, keys: k })) },
    { weight: 1, arbitrary: keys.map((k) => ({ op: 'assign' as const, keys: k })) },
    { weight: 1, arbitrary: keys.map((k) => ({ op: 'assignValues' as const, keys: k })) },
    { weight: 1, arbitrary: keys.map((k) => ({ op: 'assignScores' as const, keys: k })) },
    { weight: 2, arbitrary: keys.map((k) => ({ op: 'findOrInsert' as const, keys: k })) },
    {
      weight: 2,
      arbitrary: keys.chain((k) =>
        fc
          .array(fc.integer({ min: 0, max: 1 }), { minLength: k.length, maxLength: k.length })
          .map((flags) => ({ op: 'accumOrAssign' as const, keys: k, flags })),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.nat({ max: 2000 }), fc.nat({ max: 400 })).map(([lo, w]) => ({ op: 'eraseIf' as const, lo, hi: lo + w })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.nat({ max: 1000 }), fc.nat({ max: 600 }))
        .map(([from, count]) => ({ op: 'exportRange' as const, from, count })),
    },
    { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
  );
  return fc.array(command, { minLength: 16, maxLength: 32, size: 'max' });
}

/**
 * Random sequences of every operation on an LRU cache of few buckets (so buckets fill and evict),
 * against the model: the exact entries, values, scores, statuses and evicted entries.
 */
async function lruSequences(ctx: CheckContext, options: Partial<HkvOptions>, runs: number): Promise<void> {
  const { gpu, rng } = ctx;
  const scale = sizeScale(ctx.scale);
  const dim = options.dim ?? 4;
  const capacity = (options.capacity ?? 256) * scale;
  let evictions = 0;
  const cache = await HkvCache.create(gpu, { capacity, dim, ...options });
  const pool = skewedPool(rng, Math.floor(capacity * 1.2), cache.buckets);
  try {
    const property = fc.asyncProperty(commands(pool.length, Math.min(96, Math.max(48, Math.floor(capacity / 5)))), async (cmds) => {
      await cache.clear();
      const model = new CacheModel(cache.buckets, dim, 'lru');
      model.clock = cache.clockValue;
      let version = 0;
      for (const [step, cmd] of cmds.entries()) {
        const what = `step ${step} ${cmd.op}`;
        version++;
        if (cmd.op === 'clear') {
          await cache.clear();
          model.clear();
        } else if (cmd.op === 'eraseIf') {
          const p = { scoreMin: BigInt(model.clock - cmd.hi), scoreMax: BigInt(model.clock - cmd.lo) };
          const want = model.matching(p);
          const got = await cache.eraseIf(p);
          for (const k of want) model.map.delete(k);
          expect(got === want.length, `${what}: erased ${got}, model ${want.length}`);
        } else if (cmd.op === 'exportRange') {
          const from = Math.min(cmd.from, cache.capacity);
          const count = Math.min(cmd.count, cache.capacity - from);
          const part = await cache.exportBatch(from, count);
          for (let i = 0; i < part.keys.length; i++) {
            const e = model.map.get(part.keys[i] as bigint);
            expect(e !== undefined && e.score === part.scores[i], `${what}: exported an entry the model lacks or scores differently`);
          }
        } else {
          const keys = BigUint64Array.from(cmd.keys, (i) => pool[i] as bigint);
          const values = rows(keys, dim, version);
          if (cmd.op === 'find' || cmd.op === 'contains') {
            const got = cmd.op === 'find' ? await cache.find(keys, { withScores: true }) : { found: await cache.contains(keys) };
            keys.forEach((k, i) => {
              const e = model.map.get(k);
              expect((got.found[i] === 1) === (e !== undefined), `${what}: key ${i} found ${got.found[i]}, model ${e !== undefined}`);
              if ('values' in got && e) {
                expect(sameRow(got.values.slice(i * dim, (i + 1) * dim), e.value), `${what}: key ${i} value differs`);
                expect(got.scores?.[i] === e.score, `${what}: key ${i} score ${got.scores?.[i]}, model ${e.score}`);
              } else if ('values' in got) {
                expect(
                  got.values.slice(i * dim, (i + 1) * dim).every((x) => x === 0),
                  `${what}: key ${i} is absent but its value is not zeros`,
                );
              }
            });
            continue;
          }
          if (cmd.op === 'erase') {
            const want = model.erase(keys);
            const got = await cache.erase(keys);
            expect(got === want, `${what}: erased ${got}, model ${want}`);
            continue;
          }
          const mode = (
            {
              insertOrAssign: 'upsert',
              insertAndEvict: 'upsert',
              assign: 'assign',
              assignValues: 'assignValues',
              assignScores: 'assignScores',
              findOrInsert: 'touch',
              accumOrAssign: 'accum',
            } as const
          )[cmd.op];
          const flags = cmd.op === 'accumOrAssign' ? Uint8Array.from(cmd.flags) : undefined;
          const before = new Map(model.map);
          const want = model.upsert(mode, keys, mode === 'assignScores' ? undefined : values, undefined, flags);
          expect(!want.uncertain, `${what}: the model cannot decide this batch (a test bug)`);
          evictions += want.evicted.size;
          let got: { status: Uint8Array };
          if (cmd.op === 'insertOrAssign') got = await cache.insertOrAssign(keys, values);
          else if (cmd.op === 'insertAndEvict') {
            const r: EvictResult = await cache.insertAndEvict(keys, values);
            got = r;
            expect(r.evictedKeys.length === want.evicted.size, `${what}: ${r.evictedKeys.length} evicted, model ${want.evicted.size}`);
            r.evictedKeys.forEach((k, e) => {
              const m = want.evicted.get(k) ?? (before.has(k) ? undefined : undefined);
              expect(m !== undefined, `${what}: evicted 0x${k.toString(16)}, which the model keeps`);
              expect(
                sameRow(r.evictedValues.slice(e * dim, (e + 1) * dim), (m as { value: Float32Array }).value),
                `${what}: evicted value differs`,
              );
              expect(r.evictedScores[e] === m?.score, `${what}: evicted score ${r.evictedScores[e]}, model ${m?.score}`);
            });
          } else if (cmd.op === 'assign') got = await cache.assign(keys, values);
          else if (cmd.op === 'assignValues') got = await cache.assignValues(keys, values);
          else if (cmd.op === 'assignScores') got = await cache.assignScores(keys);
          else if (cmd.op === 'accumOrAssign') got = await cache.accumOrAssign(keys, values, flags as Uint8Array);
          else {
            const r = await cache.findOrInsert(keys, values);
            got = r;
            keys.forEach((k, i) => {
              const e = model.map.get(k);
              const wantFound = want.status[i] === HkvStatus.found || (want.status[i] === HkvStatus.duplicate && before.has(k));
              if (want.status[i] !== HkvStatus.duplicate)
                expect((r.found[i] === 1) === wantFound, `${what}: key ${i} found flag ${r.found[i]}`);
              expect(
                e !== undefined && sameRow(r.values.slice(i * dim, (i + 1) * dim), e.value),
                `${what}: key ${i} returned the wrong value`,
              );
            });
          }
          expectStatuses(got.status, want, keys, cache.buckets, what);
        }
        if (step % 4 === 3 || step === cmds.length - 1) await expectModel(cache, model, what);
      }
    });
    await checkProperty(property, {
      seed: rng.u32() | 0,
      numRuns: runs,
      scale: ctx.scale,
      describe: (cmds) => `${cmds.length} commands: ${cmds.map((c) => ('keys' in c ? `${c.op}(${c.keys.length})` : c.op)).join(' ')}`,
    });
    expect(evictions > 0, 'the sequences never filled a bucket');
  } finally {
    cache.destroy();
  }
}

/** Dual-bucket mode with every value in host memory: the batch invariants (values checked) of custom-scored insertAndEvict batches. */
async function hostDual(ctx: CheckContext): Promise<void> {
  await policyInvariants(ctx, 'custom', 3, 'dual', { maxDeviceBytesForValues: 0 });
  // Single-bucket, half on the host: keys placed and evicted by the same batch land in host slots.
  await policyInvariants(ctx, 'custom', 3, 'single', { maxDeviceBytesForValues: 128 * 3 * 4 * sizeScale(ctx.scale) });
}

/**
 * insertAndEvict batches with policies whose new keys can lose to each other (lfu, custom with
 * random scores: admission control), checked by the batch invariants.
 */
async function policyInvariants(
  ctx: CheckContext,
  policy: ScorePolicy,
  runs: number,
  mode: 'single' | 'dual' = 'single',
  extra: Partial<HkvOptions> = {},
  shape: { capacity: number; pool: number; minKeys: number; maxKeys: number; emptyDigests?: boolean } = {
    capacity: 256,
    pool: 700,
    minKeys: 40,
    maxKeys: 120,
  },
): Promise<void> {
  const { gpu, rng } = ctx;
  const scale = sizeScale(ctx.scale);
  const dim = 3;
  const cache = await HkvCache.create(gpu, { capacity: shape.capacity * scale, dim, policy, mode, ...extra });
  const pool = (shape.emptyDigests ? emptyDigestPool : keyPool)(rng, shape.pool * scale);
  const totals = { refused: 0, evicted: 0 };
  try {
    const batch = fc.record({
      keys: fc.array(fc.nat({ max: pool.length - 1 }), {
        minLength: shape.minKeys * scale,
        maxLength: shape.maxKeys * scale,
        size: 'max',
      }),
      scores: fc.array(fc.bigInt({ min: 0n, max: 1000n }), { minLength: shape.maxKeys * scale, maxLength: shape.maxKeys * scale }),
    });
    const property = fc.asyncProperty(fc.array(batch, { minLength: 5, maxLength: 10, size: 'max' }), async (batches) => {
      await cache.clear();
      const lastValue = new Map<bigint, Float32Array>();
      let before = new Map();
      let refusedSeen = 0;
      let evictedSeen = 0;
      for (const [step, b] of batches.entries()) {
        const what = `${policy} batch ${step}`;
        const keys = BigUint64Array.from(b.keys, (i) => pool[i] as bigint);
        const values = rows(keys, dim, step + 1);
        const scores = policy === 'custom' || step % 2 === 0 ? BigUint64Array.from(b.keys, (_, i) => b.scores[i] as bigint) : undefined;
        const r = await cache.insertAndEvict(keys, values, scores);
        for (let i = 0; i < keys.length; i++) {
          const s = r.status[i];
          if (s === HkvStatus.inserted || s === HkvStatus.evicted || s === HkvStatus.updated) {
            lastValue.set(keys[i] as bigint, values.slice(i * dim, (i + 1) * dim));
          }
        }
        // A key evicted in its own batch was last written by this batch: record before checking.
        const after = await snapshot(cache, what);
        expectBatchInvariants(
          before,
          after,
          { keys, scores, status: r.status },
          { keys: r.evictedKeys, values: r.evictedValues, scores: r.evictedScores },
          lastValue,
          cache.buckets,
          dim,
          what,
          mode === 'dual',
        );
        const busy = r.status.filter((s) => s === HkvStatus.busy).length;
        expect(busy === 0, `${what}: ${busy} keys left busy after every insert pass`);
        refusedSeen += r.refused.length;
        evictedSeen += r.evictedKeys.length;
        expect(
          policy === 'custom' || r.refused.length === 0,
          `${what}: ${policy} refused ${r.refused.length} keys (only custom scores are admission-checked)`,
        );
        before = after;
      }
      totals.refused += refusedSeen;
      totals.evicted += evictedSeen;
    });
    await checkProperty(property, {
      seed: rng.u32() | 0,
      numRuns: runs,
      scale: ctx.scale,
      describe: (batches) =>
        `${batches.length} batches of ${batches.map((b) => b.keys.length).join(', ')} keys from a pool of ${pool.length}`,
    });
    expect(
      totals.evicted > 0 && (policy !== 'custom' || totals.refused > 0),
      `the batches evicted ${totals.evicted} and refused ${totals.refused}: too few to check`,
    );
  } finally {
    cache.destroy();
  }
}

/** What a device find's output rows hold before the find: an absent key's row must keep it. */
const ABSENT_MARK = -7.25;

/**
 * Finds in caches whose values lie in `windows` windows (4: a partition by bucket window, or in dual-bucket
 * mode copies from the recorded slots) against the cache's own export: found exactly the stored
 * keys, with their values and scores, and zeros for the others (host finds; device finds leave
 * the rows of absent keys as they were).
 */
async function windowedFinds(ctx: CheckContext, dim: number, windows: 1 | 4): Promise<void> {
  const { gpu, rng } = ctx;
  const scale = sizeScale(ctx.scale);
  const bytes = 128 * dim * 4 * scale;
  const split = windows === 4 ? { maxValueBufferBytes: bytes, valueWindowBytes: bytes } : {};
  for (const mode of ['single', 'dual'] as const) {
    const cache = await HkvCache.create(gpu, { dim, capacity: 512 * scale, mode, ...split });
    try {
      expect(cache.valueSplit.windows === windows, `${mode}: expected ${windows} windows, got ${cache.valueSplit.windows}`);
      const pool = keyPool(rng, 700 * scale);
      const indices = (max: number) => fc.array(fc.nat({ max: pool.length - 1 }), { minLength: 1, maxLength: max * scale, size: 'max' });
      const input = fc.record({ stored: indices(600), asked: indices(400), withScores: fc.boolean() });
      const property = fc.asyncProperty(input, async ({ stored, asked, withScores }) => {
        await cache.clear();
        const keys = BigUint64Array.from(stored, (i) => pool[i] as bigint);
        await cache.insertOrAssign(keys, rows(keys, dim, 1));
        const held = await snapshot(cache, `${mode}: after the inserts`);
        const query = BigUint64Array.from(asked, (i) => pool[i] as bigint);
        const got = await cache.find(query, { withScores });
        query.forEach((k, i) => {
          const e = held.get(k);
          const what = `${mode}, ${withScores ? 'with' : 'without'} scores, key ${i}`;
          expect((got.found[i] === 1) === (e !== undefined), `${what}: found ${got.found[i]}, stored ${e !== undefined}`);
          const row = got.values.slice(i * dim, (i + 1) * dim);
          expect(e ? sameRow(row, e.value) : row.every((x) => x === 0), `${what}: value [${row}], stored [${e?.value ?? 'none'}]`);
          if (withScores) expect(got.scores?.[i] === (e?.score ?? 0n), `${what}: score ${got.scores?.[i]}, stored ${e?.score}`);
        });
        // The same keys as three device batches in one encoder (windows visited once for all).
        const cuts = [0, Math.floor(query.length / 3), Math.floor((2 * query.length) / 3), query.length];
        const parts = cuts
          .slice(1)
          .map((end, c) => ({ from: cuts[c] as number, n: end - (cuts[c] as number) }))
          .filter((p) => p.n > 0)
          .map(({ from, n }) => ({
            from,
            n,
            keys: gpu.upload(new Uint32Array(query.slice(from, from + n).buffer)),
            found: gpu.createArray('u32', n),
            // Rows of absent keys keep what was there (as NVIDIA's find): a marker, not zeros.
            values: gpu.upload(new Float32Array(n * dim).fill(ABSENT_MARK)),
          }));
        const encoder = gpu.device.createCommandEncoder();
        cache.encodeFindBatches(encoder, parts);
        gpu.submit([encoder.finish()]);
        for (const [c, p] of parts.entries()) {
          const found = await gpu.download(p.found, p.n);
          const values = await gpu.download(p.values, p.n * dim);
          for (let i = 0; i < p.n; i++) {
            const at = p.from + i;
            expect(found[i] === got.found[at], `${mode}, batch ${c} key ${i}: device found ${found[i]}, host ${got.found[at]}`);
            const row = values.slice(i * dim, (i + 1) * dim);
            expect(
              got.found[at] === 1 ? sameRow(row, got.values.slice(at * dim, (at + 1) * dim)) : row.every((x) => x === ABSENT_MARK),
              `${mode}, batch ${c} key ${i} (found ${got.found[at]}): device row [${row}], host row [${got.values.slice(at * dim, (at + 1) * dim)}]`,
            );
          }
          for (const a of [p.keys, p.found, p.values]) a.destroy();
        }
      });
      await checkProperty(property, { seed: rng.u32() | 0, numRuns: 3, scale: ctx.scale });
    } finally {
      cache.destroy();
    }
  }
}

/**
 * Several device insertOrAssign batches in one call over 4 windows (each window's copies then run
 * for every batch back to back), sharing one out buffer: batches reuse keys (updates) and overfill
 * the cache (evictions, which under LRU take slots of earlier batches), so a copy run out of order
 * leaves a key with an older batch's value. Every stored key must hold the value of the last batch
 * that wrote it; with room for every key, every key is stored. With assumeUniqueKeys (each batch's
 * keys made unique) the statuses are not cleared before the update pass, so the out buffer starts
 * full of a stale status that a key left unwritten would keep.
 */
async function deviceUpsertBatches(ctx: CheckContext, dim = 8): Promise<void> {
  const { gpu, rng } = ctx;
  const scale = sizeScale(ctx.scale);
  const bytes = 128 * dim * 4 * scale;
  const capacity = 512 * scale;
  for (const [mode, unique] of [
    ['single', false],
    ['dual', false],
    ['dual', true],
  ] as const) {
    const cache = await HkvCache.create(gpu, {
      dim,
      capacity,
      mode,
      maxValueBufferBytes: bytes,
      valueWindowBytes: bytes,
      assumeUniqueKeys: unique,
    });
    try {
      expect(cache.valueSplit.windows === 4, `${mode}: expected 4 windows, got ${cache.valueSplit.windows}`);
      const input = fc.record({
        poolSize: fc.constantFrom(capacity / 2, 2 * capacity),
        // Lists of one group at most: the default, a few small batches, or less than some batches need (those run alone).
        listsCap: fc.constantFrom(2 ** 31, 8192, 2048),
        batches: fc.array(fc.array(fc.nat({ max: 2 * capacity - 1 }), { minLength: 1, maxLength: 300 * scale }), {
          minLength: 2,
          maxLength: 6,
        }),
      });
      const pool = keyPool(rng, 2 * capacity);
      const property = fc.asyncProperty(input, async ({ poolSize, listsCap, batches }) => {
        await cache.clear();
        (cache as unknown as { engine: { sharedListsBytes: number } }).engine.sharedListsBytes = listsCap;
        const lastWrite = new Map<bigint, Float32Array>();
        // Every word a stale "updated" status: a key whose status the passes left alone would keep it.
        const out = gpu.upload(new Uint32Array(4 + 2 * 300 * scale).fill(HkvStatus.updated));
        const device = batches.map((picks, version) => {
          const picked = picks.map((i) => pool[i % poolSize] as bigint);
          const keys = BigUint64Array.from(unique ? new Set(picked) : picked);
          const values = rows(keys, dim, version + 1);
          keys.forEach((k, i) => {
            lastWrite.set(k, values.slice(i * dim, (i + 1) * dim));
          });
          return {
            keys: gpu.upload(new Uint32Array(keys.buffer)),
            values: gpu.upload(values),
            out: DeviceArray.wrap(out.buffer, 4 + 2 * keys.length, 'u32'),
          };
        });
        const encoder = gpu.device.createCommandEncoder();
        cache.encodeInsertOrAssignBatches(encoder, device);
        gpu.submit([encoder.finish()]);
        const held = await snapshot(cache, `${mode}: after ${batches.length} batches`);
        for (const [k, e] of held) {
          const want = lastWrite.get(k);
          expect(want !== undefined, `${mode}: key ${k} stored but never inserted`);
          expect(sameRow(e.value, want as Float32Array), `${mode}: key ${k} holds [${e.value}], its last batch wrote [${want}]`);
        }
        if (poolSize <= capacity / 2 && mode === 'dual') {
          expect(held.size === lastWrite.size, `${mode}: ${held.size} of ${lastWrite.size} keys stored with room for all`);
        }
        for (const d of device) for (const a of [d.keys, d.values]) a.destroy();
        out.destroy();
      });
      await checkProperty(property, { seed: rng.u32() | 0, numRuns: 6, scale: ctx.scale });
    } finally {
      cache.destroy();
    }
  }
}

/**
 * One insertOrAssign of more keys than the cache holds, over 4 windows, after a prefill it partly
 * updates: its later passes evict keys its earlier passes placed or updated, while the values of the
 * windows past the first are copied once, after its last pass, from one list of every pass's keys.
 * A copy listed for a key evicted by the same batch must not land: every stored key holds its own
 * row (the batch's when the batch wrote it).
 */
async function batchOverCapacity(ctx: CheckContext): Promise<void> {
  const { gpu, rng } = ctx;
  const scale = sizeScale(ctx.scale);
  const dim = 8;
  const bytes = 128 * dim * 4 * scale;
  const capacity = 512 * scale;
  const pool = keyPool(rng, 4 * capacity);
  for (const policy of ['lru', 'custom'] as const) {
    for (const mode of ['single', 'dual'] as const) {
      const cache = await HkvCache.create(gpu, { dim, capacity, mode, policy, maxValueBufferBytes: bytes, valueWindowBytes: bytes });
      try {
        expect(cache.valueSplit.windows === 4, `${policy}, ${mode}: expected 4 windows, got ${cache.valueSplit.windows}`);
        const input = fc.record({
          prefill: fc.nat({ max: capacity / 2 }),
          overlap: fc.nat({ max: capacity / 2 }),
          n: fc.integer({ min: capacity + 1, max: 3 * capacity }),
          seed: fc.nat(),
        });
        const property = fc.asyncProperty(input, async ({ prefill, overlap, n, seed }) => {
          await cache.clear();
          const scores = (count: number, salt: number) =>
            BigUint64Array.from({ length: count }, (_, i) => BigInt(((i + 1) * 2654435761 + seed * 40503 + salt) >>> 0));
          const first = pool.slice(0, prefill);
          const from = Math.min(overlap, prefill);
          const batch = pool.slice(from, from + n);
          const want = new Map<bigint, Float32Array>();
          const remember = (keys: BigUint64Array, values: Float32Array) =>
            keys.forEach((k, i) => {
              want.set(k, values.slice(i * dim, (i + 1) * dim));
            });
          if (prefill > 0) {
            const values = rows(first, dim, 1);
            await cache.insertOrAssign(first, values, policy === 'custom' ? scores(prefill, 1) : undefined);
            remember(first, values);
          }
          const values = rows(batch, dim, 2);
          await cache.insertOrAssign(batch, values, policy === 'custom' ? scores(n, 2) : undefined);
          remember(batch, values);
          const held = await snapshot(cache, `${policy}, ${mode}: after ${prefill} keys, then ${n} (${prefill - from} of them updates)`);
          expect(held.size > 0, `${policy}, ${mode}: nothing stored`);
          for (const [k, e] of held) {
            const row = want.get(k);
            expect(row !== undefined, `${policy}, ${mode}: key ${k} stored but never inserted`);
            expect(sameRow(e.value, row as Float32Array), `${policy}, ${mode}: key ${k} holds [${e.value}], its last write was [${row}]`);
          }
        });
        await checkProperty(property, { seed: rng.u32() | 0, numRuns: 4, scale: ctx.scale });
      } finally {
        cache.destroy();
      }
    }
  }
}

/**
 * A device out of memory while a cache allocates (simulated: the out-of-memory scope of create's
 * allocation reports an error): create rejects with GpuOutOfMemoryError naming it, every buffer it
 * allocated is destroyed, and the Gpu serves a cache created next (its keys found with their values).
 */
async function outOfMemoryAtCreate(ctx: CheckContext): Promise<void> {
  const { rng } = ctx;
  // A Gpu of its own, whose device reports running out of memory (simulated) while create allocates.
  const gpu = await requestGpu({ allowSoftware: true, log: () => {} });
  const input = fc.record({
    dim: fc.integer({ min: 1, max: 40 }),
    buckets: fc.integer({ min: 1, max: 4 }),
    mode: fc.constantFrom('single' as const, 'dual' as const),
    policy: fc.constantFrom<ScorePolicy>('lru', 'lfu', 'custom'),
  });
  const property = fc.asyncProperty(input, async ({ dim, buckets, mode, policy }) => {
    const options: HkvOptions = { capacity: buckets * 128, dim, mode, policy };
    const { error, allocated, kept } = await createOutOfMemory(gpu, () => HkvCache.create(gpu, options));
    const what = `dim ${dim}, ${buckets} buckets, ${mode}, ${policy}`;
    expect(error instanceof GpuOutOfMemoryError, `${what}: create gave ${String(error)}, not a GpuOutOfMemoryError`);
    expect((error as Error).message.includes('HkvCache.create'), `${what}: the error does not name HkvCache.create: ${String(error)}`);
    expect(allocated > 0, `${what}: create allocated no buffer before the error`);
    expect(kept.length === 0, `${what}: buffers left allocated after the failed create: ${kept.join(', ')}`);
    const cache = await HkvCache.create(gpu, options);
    try {
      const keys = keyPool(rng, 64 * buckets);
      const scores = policy === 'custom' ? BigUint64Array.from(keys, (_, i) => BigInt(i + 1)) : undefined;
      await cache.insertOrAssign(keys, rows(keys, dim, 2), scores);
      const got = await cache.find(keys);
      expect(
        got.found.every((f) => f === 1) && sameRow(got.values, rows(keys, dim, 2)),
        `${what}: the cache created after the failed one lost keys or values`,
      );
    } finally {
      cache.destroy();
    }
  });
  try {
    await checkProperty(property, { seed: rng.u32() | 0, numRuns: 6, scale: ctx.scale });
  } finally {
    gpu.destroy();
  }
}

export const cacheChecks = defineChecks('hkv/cache', [
  {
    name: 'a device out of memory while create allocates: GpuOutOfMemoryError, every buffer it allocated destroyed, the next cache sound',
    run: outOfMemoryAtCreate,
  },
  {
    name: 'lru: random sequences of every operation on one bucket match the model',
    run: (ctx) => lruSequences(ctx, { dim: 4, capacity: 128 }, 6),
  },
  { name: 'lru: random sequences on two buckets match the model', run: (ctx) => lruSequences(ctx, { dim: 2, capacity: 256 }, 6) },
  {
    name: 'cooperative groups of 1 (no subgroups), 2 and all lanes: random sequences match the model; custom and dual-bucket invariants',
    run: async (ctx) => {
      const settings: Partial<HkvOptions>[] = [{ subgroups: false }];
      if (ctx.gpu.subgroups.supported) settings.push({ tile: 2 }, { tile: 32 });
      for (const group of settings) {
        await lruSequences(ctx, { dim: 5, capacity: 256, ...group }, 2);
        await policyInvariants(ctx, 'custom', 3, 'dual', group);
        await policyInvariants(ctx, 'lfu', 1, 'single', group, { capacity: 128, pool: 600, minKeys: 200, maxKeys: 256 });
      }
    },
  },
  {
    // Groups of 8 read one digest quad a lane (batchLookupModule's widest tile); capped to the
    // subgroup on devices with smaller subgroups.
    name: 'cooperative groups of 8: random sequences match the model; LFU invariants',
    run: async (ctx) => {
      await lruSequences(ctx, { dim: 5, capacity: 256, tile: 8 }, 2);
      await policyInvariants(ctx, 'lfu', 1, 'single', { tile: 8 }, { capacity: 128, pool: 600, minKeys: 200, maxKeys: 256 });
    },
  },
  {
    name: 'values in more buffers than one kernel binds (windows of buffers, each with its value passes): random sequences match the model',
    run: (ctx) => {
      const dim = 6;
      const slices = ctx.gpu.limits.maxStorageBuffersPerShaderStage - 7 + 2;
      const buckets = 2 ** Math.ceil(Math.log2(slices));
      return lruSequences(ctx, { dim, capacity: 128 * buckets, maxValueBufferBytes: 128 * dim * 4 * sizeScale(ctx.scale) }, 3);
    },
  },
  {
    name: 'host tier: half the values in host memory, random sequences match the model',
    run: (ctx) => lruSequences(ctx, { dim: 4, capacity: 256, maxDeviceBytesForValues: 128 * 4 * 4 * sizeScale(ctx.scale) }, 4),
  },
  {
    name: 'host tier: custom insertAndEvict invariants, every value on the host (dual-bucket) and half of them (single)',
    run: (ctx) => hostDual(ctx),
  },
  {
    name: 'values in windows of one buffer each (valueWindowBytes: one buffer): random sequences match the model',
    run: async (ctx) => {
      const bytes = 128 * 8 * 4;
      const probe = await HkvCache.create(ctx.gpu, { dim: 8, capacity: 512, maxValueBufferBytes: bytes, valueWindowBytes: bytes });
      const { slices, windows } = probe.valueSplit;
      probe.destroy();
      expect(windows === slices && slices === 4, `expected 4 windows of one buffer, got ${windows} windows of ${slices} buffers`);
      await lruSequences(ctx, { dim: 8, capacity: 512, maxValueBufferBytes: bytes, valueWindowBytes: bytes }, 3);
    },
  },
  {
    name: 'finds over windows of one buffer each, single- and dual-bucket, with and without scores, host and in device batches: the stored entries; absent keys zeros (host) or their rows untouched (device)',
    run: (ctx) => windowedFinds(ctx, 8, 4),
  },
  {
    name: 'device insertOrAssign batches in one call over 4 windows (copies window by window for all batches), single- and dual-bucket: every stored key holds the value of the last batch that wrote it',
    run: (ctx) => deviceUpsertBatches(ctx),
  },
  {
    name: 'one insertOrAssign past the capacity over 4 windows (every pass listed once, copies after the last), lru and custom, single- and dual-bucket: every stored key holds its own value',
    run: (ctx) => batchOverCapacity(ctx),
  },
  {
    // Window lists of dim-64 vectors: 16 quads a key, each its own invocation of a copy pass.
    name: 'copy passes of dim-64 vectors over 4 windows: finds and device insertOrAssign batches as above',
    run: async (ctx) => {
      await windowedFinds(ctx, 64, 4);
      await deviceUpsertBatches(ctx, 64);
    },
  },
  {
    name: 'finds in one window, dims 2 (one lane a key) and 8 (groups), host and device: the stored entries; absent keys zeros (host) or their rows untouched (device)',
    run: async (ctx) => {
      await windowedFinds(ctx, 2, 1);
      await windowedFinds(ctx, 8, 1);
    },
  },
  {
    name: 'lru: values split across 4 buffers (dim 8) match the model',
    run: (ctx) => lruSequences(ctx, { dim: 8, capacity: 512, maxValueBufferBytes: 128 * 8 * 4 * sizeScale(ctx.scale) }, 3),
  },
  {
    name: 'lru: dim 256 across 2 value buffers, with the dedupe pass skipped for unique batches',
    async run({ gpu, rng, scale: runScale }) {
      const scale = sizeScale(runScale);
      const dim = 256;
      const cache = await HkvCache.create(gpu, {
        capacity: 256 * scale,
        dim,
        maxValueBufferBytes: 128 * dim * 4 * scale,
        assumeUniqueKeys: true,
      });
      try {
        expect(cache.valueSplit.slices === 2, `expected 2 value buffers, got ${cache.valueSplit.slices}`);
        const model = new CacheModel(cache.buckets, dim, 'lru');
        const pool = keyPool(rng, 400 * scale);
        for (let step = 0; step < 4; step++) {
          const keys = pool.slice(step * 100 * scale, (step + 1) * 100 * scale);
          const values = rows(keys, dim, step + 1);
          const want = model.upsert('upsert', keys, values, undefined);
          const r = await cache.insertAndEvict(keys, values);
          expectStatuses(r.status, want, keys, cache.buckets, `dim 256 step ${step}`);
          expect(
            r.evictedKeys.length === want.evicted.size,
            `dim 256 step ${step}: ${r.evictedKeys.length} evicted, model ${want.evicted.size}`,
          );
          r.evictedKeys.forEach((k, e) => {
            expect(
              sameRow(r.evictedValues.slice(e * dim, (e + 1) * dim), want.evicted.get(k)?.value ?? new Float32Array()),
              'evicted value',
            );
          });
        }
        await expectModel(cache, model, 'dim 256');
        const f = await cache.find(pool);
        pool.forEach((k, i) => {
          const e = model.map.get(k);
          expect((f.found[i] === 1) === (e !== undefined), `dim 256 find ${i}`);
          if (e) expect(sameRow(f.values.slice(i * dim, (i + 1) * dim), e.value), `dim 256 value ${i}`);
        });
      } finally {
        cache.destroy();
      }
    },
  },
  { name: 'lfu: insertAndEvict invariants (never refuses, evicts minimum frequencies)', run: (ctx) => policyInvariants(ctx, 'lfu', 3) },
  {
    // Many invocations race on each bucket: up to 2.5x a bucket's slots of new keys per bucket and batch,
    // so slots are contended, keys placed by one insert pass are evicted by the next, and passes leave keys busy.
    name: 'lfu and custom: insertAndEvict invariants on contended buckets (batches of twice the capacity)',
    async run(ctx) {
      const shape = { capacity: 512, pool: 4000, minKeys: 600, maxKeys: 1300 };
      await policyInvariants(ctx, 'lfu', 2, 'single', {}, shape);
      await policyInvariants(ctx, 'custom', 2, 'single', {}, shape);
    },
  },
  {
    // A quarter of the keys hash to the empty slots' digest byte. Were it their digest, an inserter would claim
    // their slots as free ones and release them again, and a concurrent inserter's minimum would skip them.
    name: 'lfu and custom: insertAndEvict invariants on contended buckets, a quarter of the keys hashing to the empty digest',
    async run(ctx) {
      const shape = { capacity: 512, pool: 4000, minKeys: 600, maxKeys: 1300, emptyDigests: true };
      await policyInvariants(ctx, 'lfu', 2, 'single', {}, shape);
      await policyInvariants(ctx, 'custom', 2, 'single', {}, shape);
    },
  },
  { name: 'dual-bucket, lru: insertAndEvict invariants', run: (ctx) => policyInvariants(ctx, 'lru', 3, 'dual') },
  {
    name: 'dual-bucket, custom: insertAndEvict invariants with admission control',
    run: (ctx) => policyInvariants(ctx, 'custom', 3, 'dual'),
  },
  {
    name: 'dual-bucket: the first eviction comes near load 1, single-bucket well before',
    async run({ gpu, rng, scale: runScale }) {
      const scale = sizeScale(runScale);
      const capacity = 16384 * scale;
      const loads: Record<string, number> = {};
      const pool = keyPool(rng, capacity);
      for (const mode of ['single', 'dual'] as const) {
        const cache = await HkvCache.create(gpu, { capacity, dim: 1, mode, assumeUniqueKeys: true });
        try {
          const batch = capacity / 128;
          let at = 0;
          for (; at < capacity; at += batch) {
            const r = await cache.insertAndEvict(pool.slice(at, at + batch), new Float32Array(batch));
            if (r.evictedKeys.length > 0) break;
          }
          loads[mode] = at / capacity;
          const f = await cache.find(pool.slice(0, at + batch));
          const evicted = at < capacity ? batch - f.found.subarray(at).reduce((a, x) => a + x, 0) : 0;
          expect(f.found.reduce((a, x) => a + x, 0) === (await cache.size()), `${mode}: finds agree with size`);
          expect(evicted >= 0, `${mode}: evictions accounted`);
        } finally {
          cache.destroy();
        }
      }
      const [single, dual] = [loads.single as number, loads.dual as number];
      expect(dual >= 0.95 && single < dual - 0.08, `first eviction: single ${single}, dual ${dual}`);
    },
  },
  { name: 'custom: insertAndEvict invariants with admission control', run: (ctx) => policyInvariants(ctx, 'custom', 4) },
  {
    name: 'custom: a key below its full bucket minimum is refused, a tie is admitted',
    async run({ gpu, rng }) {
      const cache = await HkvCache.create(gpu, { capacity: 128, dim: 1, policy: 'custom' });
      try {
        const pool = keyPool(rng, 200);
        const fill = pool.slice(0, 128);
        await cache.insertOrAssign(
          fill,
          new Float32Array(128).fill(1),
          BigUint64Array.from(fill, (_, i) => 100n + BigInt(i)),
        );
        const low = await cache.insertAndEvict(pool.slice(128, 129), Float32Array.of(2), BigUint64Array.of(99n));
        expect(
          low.status[0] === HkvStatus.refused && low.refused[0] === 0 && low.evictedKeys.length === 0,
          `score 99 < min 100: status ${low.status[0]}`,
        );
        const tie = await cache.insertAndEvict(pool.slice(129, 130), Float32Array.of(3), BigUint64Array.of(100n));
        expect(
          tie.status[0] === HkvStatus.evicted && tie.evictedKeys[0] === fill[0] && tie.evictedScores[0] === 100n,
          'a tie with the minimum is admitted and evicts it',
        );
        const high = await cache.insertAndEvict(pool.slice(130, 131), Float32Array.of(4), BigUint64Array.of(1n << 63n));
        expect(high.evictedKeys[0] === pool[129], 'a high score evicts the minimum (the tie just admitted, score 100)');
        expect((await cache.size()) === 128, 'the bucket stays full');
      } finally {
        cache.destroy();
      }
    },
  },
  {
    name: 'epochLru and epochLfu: the epoch is the high word; lfu and epochLfu saturate',
    async run({ gpu, rng }) {
      const pool = keyPool(rng, 8);
      const lru = await HkvCache.create(gpu, { capacity: 128, dim: 1, policy: 'epochLru' });
      const lfu = await HkvCache.create(gpu, { capacity: 128, dim: 1, policy: 'epochLfu' });
      const plain = await HkvCache.create(gpu, { capacity: 128, dim: 1, policy: 'lfu' });
      try {
        lru.epoch = 7;
        await lru.insertOrAssign(pool.slice(0, 2), Float32Array.of(1, 2));
        let f = await lru.find(pool.slice(0, 2), { withScores: true });
        expect(f.scores?.[0] === 7n << 32n && f.scores?.[1] === (7n << 32n) + 1n, `epochLru scores ${f.scores}`);
        lfu.epoch = 3;
        await lfu.insertOrAssign(pool.slice(0, 1), Float32Array.of(1), BigUint64Array.of(5n));
        await lfu.insertOrAssign(pool.slice(0, 1), Float32Array.of(1), BigUint64Array.of(0xffff_fffen));
        f = await lfu.find(pool.slice(0, 1), { withScores: true });
        expect(f.scores?.[0] === (3n << 32n) + 0xffff_ffffn, `epochLfu saturates at 2^32 - 1: ${f.scores?.[0]}`);
        lfu.epoch = 4;
        await lfu.insertOrAssign(pool.slice(0, 1), Float32Array.of(1), BigUint64Array.of(2n));
        f = await lfu.find(pool.slice(0, 1), { withScores: true });
        expect(f.scores?.[0] === (4n << 32n) + 2n, `a new epoch counts again: ${f.scores?.[0]}`);
        await plain.insertOrAssign(pool.slice(0, 1), Float32Array.of(1), BigUint64Array.of((1n << 64n) - 3n));
        await plain.insertOrAssign(pool.slice(0, 1), Float32Array.of(1), BigUint64Array.of(9n));
        await plain.insertOrAssign(pool.slice(1, 2), Float32Array.of(1));
        await plain.insertOrAssign(pool.slice(1, 2), Float32Array.of(1));
        f = await plain.find(pool.slice(0, 2), { withScores: true });
        expect(f.scores?.[0] === (1n << 64n) - 1n && f.scores?.[1] === 2n, `lfu: saturating, default increment 1: ${f.scores}`);
      } finally {
        lru.destroy();
        lfu.destroy();
        plain.destroy();
      }
    },
  },
  {
    name: 'duplicate keys in one batch: stored once, the last occurrence wins',
    async run({ gpu, rng, scale: runScale }) {
      const scale = sizeScale(runScale);
      const cache = await HkvCache.create(gpu, { capacity: 512 * scale, dim: 2 });
      try {
        const pool = keyPool(rng, 64);
        const n = 2000 * scale;
        const keys = BigUint64Array.from({ length: n }, () => pool[rng.below(pool.length)] as bigint);
        const values = Float32Array.from({ length: 2 * n }, (_, i) => i);
        const r = await cache.insertOrAssign(keys, values);
        const lastIndex = new Map<bigint, number>();
        keys.forEach((k, i) => {
          lastIndex.set(k, i);
        });
        expect(r.inserted === lastIndex.size, `${r.inserted} inserted for ${lastIndex.size} distinct keys`);
        const got = await snapshot(cache, 'duplicates');
        expect(got.size === lastIndex.size, `${got.size} entries for ${lastIndex.size} distinct keys`);
        for (const [k, i] of lastIndex) {
          const e = got.get(k);
          expect(
            e !== undefined && e.value[0] === 2 * i && e.score === BigInt(i),
            `key 0x${k.toString(16)}: value ${e?.value[0]} score ${e?.score}, want ${2 * i}, ${i}`,
          );
        }
        r.status.forEach((s, i) => {
          expect(s === (lastIndex.get(keys[i] as bigint) === i ? HkvStatus.inserted : HkvStatus.duplicate), `status ${i}`);
        });
      } finally {
        cache.destroy();
      }
    },
  },
  {
    name: 'typed errors: reserved keys (naming the index), dim mismatch, wrong types, missing custom scores, options',
    async run({ gpu }) {
      const cache = await HkvCache.create(gpu, { capacity: 128, dim: 4 });
      const custom = await HkvCache.create(gpu, { capacity: 128, dim: 1, policy: 'custom' });
      try {
        const keys = BigUint64Array.of(1n, 2n, RESERVED_KEYS.reclaimed, 4n);
        const e = await thrown(() => cache.insertOrAssign(keys, new Float32Array(16)));
        expect(e instanceof ReservedKeyError && e.firstIndex === 2 && e.code === 'RESERVED_KEY', `reserved: ${e}`);
        for (const k of [RESERVED_KEYS.empty, RESERVED_KEYS.locked]) {
          expect((await thrown(() => cache.find(BigUint64Array.of(k)))) instanceof ReservedKeyError, `find refuses ${k}`);
        }
        expect((await cache.size()) === 0, 'a refused batch changes nothing');
        const dim = await thrown(() => cache.insertOrAssign(BigUint64Array.of(1n), new Float32Array(3)));
        expect(dim instanceof InvalidArgumentError && /dim 4/.test(dim.message), `dim mismatch: ${dim}`);
        const type = await thrown(() => cache.insertOrAssign(BigUint64Array.of(1n), new Uint32Array(4) as unknown as Float32Array));
        expect(type instanceof InvalidArgumentError && /Float32Array/.test(type.message), `values type: ${type}`);
        const odd = await thrown(() => cache.find(new Uint32Array(3)));
        expect(odd instanceof InvalidArgumentError, `odd words: ${odd}`);
        const noScores = await thrown(() => custom.insertOrAssign(BigUint64Array.of(1n), Float32Array.of(1)));
        expect(noScores instanceof InvalidArgumentError && /custom/.test(noScores.message), `custom without scores: ${noScores}`);
        const shortScores = await thrown(() =>
          custom.insertOrAssign(BigUint64Array.of(1n, 2n), Float32Array.of(1, 2), BigUint64Array.of(1n)),
        );
        expect(shortScores instanceof InvalidArgumentError, `short scores: ${shortScores}`);
        for (const bad of [
          { capacity: 0, dim: 1 },
          { capacity: 128, dim: 0 },
          { capacity: 128, dim: 1, policy: 'mru' },
          { capacity: 256, dim: 1, maxCapacity: 128 },
          { capacity: 128, dim: 1, typo: 1 },
        ]) {
          const err = await thrown(() => HkvCache.create(gpu, bad as unknown as HkvOptions));
          expect(err instanceof InvalidArgumentError, `options ${JSON.stringify(bad)}: ${err}`);
        }
        // A batch whose values would pass one storage binding: refused before anything runs (the
        // values array is only reserved, never written, so it costs no memory).
        const wide = await HkvCache.create(gpu, { capacity: 128, dim: 1024 });
        try {
          const n = Math.floor(gpu.limits.maxStorageBufferBindingSize / 4096) + 1;
          const many = BigUint64Array.from({ length: n }, (_, i) => BigInt(i + 1));
          for (const [what, call] of [
            ['insertOrAssign', () => wide.insertOrAssign(many, new Float32Array(n * 1024))],
            ['find', () => wide.find(many)],
          ] as const) {
            const big = await thrown(call);
            expect(
              big instanceof LimitExceededError && big.message.includes(`batches of at most ${n - 1} keys`),
              `${what} past one binding: ${big}`,
            );
          }
          // The same for device batches, before the arrays are looked at.
          const dk = gpu.upload(new Uint32Array(many.buffer));
          const small = gpu.createArray('f32', 1024);
          const found = gpu.createArray('u32', 1);
          for (const [what, encode] of [
            ['encodeInsertOrAssign', (e: GPUCommandEncoder) => wide.encodeInsertOrAssign(e, { keys: dk, values: small })],
            ['encodeFindBatches', (e: GPUCommandEncoder) => wide.encodeFindBatches(e, [{ keys: dk, found, values: small }])],
          ] as const) {
            const encoder = gpu.device.createCommandEncoder();
            let err: unknown;
            try {
              encode(encoder);
            } catch (e) {
              err = e;
            }
            encoder.finish();
            expect(err instanceof LimitExceededError, `${what} past one binding: ${err}`);
          }
          for (const a of [dk, small, found]) a.destroy();
          expect((await wide.size()) === 0, 'the refused batch changed nothing');
          expect(
            (await wide.contains(many.subarray(0, 4))).every((f) => f === 0),
            'contains still runs',
          );
        } finally {
          wide.destroy();
        }
        // A growing cache whose growth pass would bind more value buffers than allowed: refused up front, naming the limit.
        const slices = gpu.limits.maxStorageBuffersPerShaderStage;
        const tooMany = await thrown(() =>
          HkvCache.create(gpu, { capacity: 128, maxCapacity: 128 * 2 ** Math.ceil(Math.log2(slices)), dim: 1, maxValueBufferBytes: 512 }),
        );
        expect(
          tooMany instanceof LimitExceededError && /maxStorageBuffersPerShaderStage/.test(tooMany.message),
          `too many value buffers: ${tooMany}`,
        );
        cache.destroy();
        expect((await thrown(() => cache.find(BigUint64Array.of(1n)))) instanceof DestroyedError, 'destroyed');
      } finally {
        cache.destroy();
        custom.destroy();
      }
    },
  },
  {
    name: 'growth: automatic doubling past maxLoadFactor keeps every entry up to maxCapacity, then evicts',
    async run({ gpu, rng, scale: runScale }) {
      const scale = sizeScale(runScale);
      const cache = await HkvCache.create(gpu, {
        capacity: 128,
        maxCapacity: 1024 * scale,
        dim: 2,
        maxValueBufferBytes: 256 * 2 * 4 * scale,
      });
      try {
        const pool = keyPool(rng, 1200 * scale);
        const model = new CacheModel(cache.buckets, 2, 'lru');
        for (let at = 0; at < 400 * scale; at += 50 * scale) {
          // New keys and, after the first batch, the previous batch's keys again (new values): a
          // batch that grows the cache must still find the keys it already holds.
          const keys = pool.slice(Math.max(0, at - 25 * scale), at + 50 * scale);
          const values = rows(keys, 2, at);
          const r = await cache.insertOrAssign(keys, values);
          model.buckets = cache.buckets;
          model.upsert('upsert', keys, values, undefined);
          expect(r.evicted === 0, `no eviction while growing (capacity ${cache.capacity})`);
        }
        expect(cache.capacity >= 800 * scale, `grew to ${cache.capacity}`);
        expect(cache.valueSplit.slices > 1, 'the grown values span several buffers');
        await expectModel(cache, model, 'after growth');
        await cache.reserve(1024 * scale);
        expect(cache.capacity === 1024 * scale, `reserve: ${cache.capacity}`);
        model.buckets = cache.buckets;
        await expectModel(cache, model, 'after reserve');
        expect((await thrown(() => cache.reserve(4096 * scale))) instanceof InvalidArgumentError, 'reserve past maxCapacity');
        const rest = pool.slice(400 * scale);
        const r = await cache.insertAndEvict(rest, rows(rest, 2, 9999));
        expect(cache.capacity === 1024 * scale && r.evictedKeys.length > 0, 'cache mode at maxCapacity: evicts');
        expect((await cache.size()) <= cache.capacity, 'size within capacity');
      } finally {
        cache.destroy();
      }
    },
  },
  {
    name: 'consecutive finds and contains merge into one dispatch, in call order with inserts',
    async run({ gpu, rng }) {
      const cache = await HkvCache.create(gpu, { capacity: 1024, dim: 2 });
      try {
        const pool = keyPool(rng, 300);
        const a = pool.slice(0, 100);
        const b = pool.slice(100, 200);
        let finds = 0;
        const engine = (cache as unknown as { engine: { encodeFind: (...args: unknown[]) => void } }).engine;
        const original = engine.encodeFind.bind(engine);
        engine.encodeFind = (...args: unknown[]) => {
          finds++;
          original(...args);
        };
        const p1 = cache.find(a);
        const p2 = cache.find(b);
        const p3 = cache.insertOrAssign(a, rows(a, 2, 1));
        const p4 = cache.find(a);
        const p5 = cache.find(b);
        const [r1, r2, , r4, r5] = await Promise.all([p1, p2, p3, p4, p5]);
        expect(finds === 2, `${finds} find dispatches for two groups of two`);
        expect(r1.found.every((f) => f === 0) && r2.found.every((f) => f === 0), 'before the insert: nothing');
        expect(r4.found.every((f) => f === 1) && r5.found.every((f) => f === 0), 'after the insert: a, not b');
        expect(sameRow(r4.values, rows(a, 2, 1)), 'merged values come back to their callers');
      } finally {
        cache.destroy();
      }
    },
  },
  {
    name: 'consecutive assigns of one kind merge into one dispatch; a batch repeating a key starts another; results equal one call at a time',
    async run({ gpu, rng }) {
      const dim = 2;
      const pool = keyPool(rng, 400);
      const present = pool.slice(0, 300);
      const make = async () => {
        const cache = await HkvCache.create(gpu, { capacity: 1024, dim, policy: 'lfu' });
        await cache.insertOrAssign(present, rows(present, dim, 1));
        return cache;
      };
      // Batches over present and absent keys; the third repeats a key of the first.
      const batches = [
        pool.slice(0, 60),
        pool.slice(250, 350),
        BigUint64Array.of(pool[5] as bigint, pool[200] as bigint),
        pool.slice(100, 140),
      ];
      const merged = await make();
      const alone = await make();
      try {
        let updates = 0;
        const engine = (merged as unknown as { engine: { encodeUpsert: (...args: unknown[]) => void } }).engine;
        const original = engine.encodeUpsert.bind(engine);
        engine.encodeUpsert = (...args: unknown[]) => {
          updates++;
          original(...args);
        };
        const calls = (cache: HkvCache) => batches.map((b, i) => (i === 3 ? cache.assignScores(b) : cache.assign(b, rows(b, dim, 10 + i))));
        const got = await Promise.all(calls(merged));
        const want: Awaited<ReturnType<HkvCache['assign']>>[] = [];
        for (const c of calls(alone)) want.push(await c);
        expect(updates === 3, `${updates} update dispatches for assign(a), assign(b) | assign(repeat) | assignScores`);
        got.forEach((g, i) => {
          const w = want[i] as (typeof want)[number];
          expect(g.updated === w.updated && g.inserted === 0, `batch ${i}: ${g.updated} updated, alone ${w.updated}`);
          expect(
            g.status.every((s, j) => s === w.status[j]),
            `batch ${i}: statuses differ from one call at a time`,
          );
        });
        const [a, b] = [await snapshot(merged, 'merged'), await snapshot(alone, 'alone')];
        expect(a.size === b.size, 'sizes differ');
        for (const [k, e] of b) {
          const m = a.get(k);
          expect(m !== undefined && sameRow(m.value, e.value) && m.score === e.score, `key 0x${k.toString(16)} differs`);
        }
      } finally {
        merged.destroy();
        alone.destroy();
      }
    },
  },
  {
    name: 'eraseIf by key pattern and score range; exportBatch ranges cover the table once',
    async run({ gpu, rng }) {
      const cache = await HkvCache.create(gpu, { capacity: 512, dim: 1, policy: 'custom' });
      try {
        const keys = keyPool(rng, 300);
        const scores = BigUint64Array.from(keys, (_, i) => BigInt(i));
        await cache.insertOrAssign(
          keys,
          Float32Array.from(keys, (_, i) => i),
          scores,
        );
        let union = 0;
        for (let at = 0; at < cache.capacity; at += 100)
          union += (await cache.exportBatch(at, Math.min(100, cache.capacity - at))).keys.length;
        expect(union === 300, `export ranges cover ${union} entries`);
        const odd = await cache.exportBatchIf({ keyMask: 1n, keyValue: 1n });
        expect(
          odd.keys.every((k) => (k & 1n) === 1n) && odd.keys.length === keys.filter((k) => (k & 1n) === 1n).length,
          'exportBatchIf by key pattern',
        );
        const erased = await cache.eraseIf({ scoreMin: 100n, scoreMax: 199n });
        expect(erased === 100 && (await cache.size()) === 200, `eraseIf erased ${erased}`);
        const f = await cache.find(keys);
        keys.forEach((_, i) => {
          expect((f.found[i] === 1) === (i < 100 || i >= 200), `after eraseIf, key ${i}`);
        });
        // Reclaimed slots are reused: the erased keys fit back without evicting.
        const back = keys.slice(100, 200);
        const r = await cache.insertAndEvict(back, new Float32Array(100), scores.slice(100, 200));
        expect(r.inserted === 100 && r.evictedKeys.length === 0 && (await cache.size()) === 300, 'reclaimed slots take keys again');
      } finally {
        cache.destroy();
      }
    },
  },
  {
    name: 'device-resident batches: encodeInsertOrAssign and encodeFind',
    async run({ gpu, rng }) {
      const cache = await HkvCache.create(gpu, { capacity: 1024, dim: 3 });
      try {
        const keys = keyPool(rng, 500);
        const words = new Uint32Array(keys.buffer.slice(0));
        const dk = gpu.upload(words);
        const dv = gpu.upload(rows(keys, 3, 5));
        const found = gpu.createArray('u32', 500);
        const values = gpu.createArray('f32', 1500);
        const encoder = gpu.device.createCommandEncoder();
        cache.encodeInsertOrAssign(encoder, { keys: dk, values: dv });
        cache.encodeFind(encoder, dk, { found, values });
        gpu.submit([encoder.finish()]);
        const f = await gpu.download(found);
        const v = await gpu.download(values);
        expect(
          f.every((x) => x === 1),
          'every device key found',
        );
        expect(sameRow(v, rows(keys, 3, 5)), 'device values round-trip');
        const host = await cache.find(dk);
        expect(
          host.found.every((x) => x === 1),
          'host find of device keys',
        );
        for (const a of [dk, dv, found, values]) a.destroy();
      } finally {
        cache.destroy();
      }
    },
  },
]);
