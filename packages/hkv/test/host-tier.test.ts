import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EV_WORDS } from '../src/engine';
import { applyHostTier, type HostTierBatch } from '../src/host-tier';
import { HkvStatus } from '../src/types';
import { UpdateMode } from '../src/wgsl/update';

const NONE = 0xffffffff;

/** The reference: the bookkeeping by bigint-keyed Map and Set, as the host tier did it first. */
function reference(b: HostTierBatch, host: Float32Array, dim: number, d0: number): void {
  const hostRow = (g: number) => host.subarray((g - d0) * dim, (g - d0 + 1) * dim);
  const row = (i: number) => b.rows.subarray(i * dim, (i + 1) * dim);
  const keyOf = (lo: number, hi: number) => (BigInt(hi) << 32n) | BigInt(lo);
  const placed = new Map<bigint, number>();
  for (let i = 0; i < b.status.length; i++) {
    const st = b.status[i] as number;
    const g = b.slots[i] as number;
    if (st === HkvStatus.inserted || st === HkvStatus.evicted)
      placed.set(keyOf(b.keyWords[2 * i] as number, b.keyWords[2 * i + 1] as number), i);
    if (st !== HkvStatus.updated || g === NONE || g < d0 || b.mode === UpdateMode.assignScores) continue;
    const target = hostRow(g);
    if (b.mode === UpdateMode.accum) {
      const add = row(i);
      for (let j = 0; j < dim; j++) target[j] = Math.fround((target[j] as number) + (add[j] as number));
    } else target.set(row(i));
  }
  const evicted = new Set<bigint>();
  for (let e = 0; e < b.evicted; e++) {
    const k = keyOf(b.evMeta[EV_WORDS * e] as number, b.evMeta[EV_WORDS * e + 1] as number);
    evicted.add(k);
    const g = b.evMeta[EV_WORDS * e + 4] as number;
    if (g < d0) continue;
    const i = placed.get(k);
    b.evValues.set(i !== undefined ? row(i) : hostRow(g), e * dim);
  }
  for (const [k, i] of placed) {
    const g = b.slots[i] as number;
    if (g >= d0 && g !== NONE && !evicted.has(k)) hostRow(g).set(row(i));
  }
}

/**
 * A batch as the kernels leave one: unique keys, each placed, updated, refused or missing; slots
 * in a cache of `slots` slots, host-resident from `d0`; evicted entries are keys this batch placed
 * (at the slot it placed them, a later key of the batch taking it) or keys from before.
 */
const batches = fc
  .record({
    n: fc.integer({ min: 1, max: 40 }),
    slots: fc.integer({ min: 4, max: 64 }),
    dim: fc.integer({ min: 1, max: 3 }),
    mode: fc.constantFrom(UpdateMode.upsert, UpdateMode.accum, UpdateMode.assign, UpdateMode.assignScores),
    seed: fc.integer(),
  })
  .map(({ n, slots, dim, mode, seed }) => {
    let x = seed >>> 0 || 1;
    const rnd = (m: number) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % m;
    };
    const d0 = rnd(slots);
    const status = new Uint8Array(n);
    const at = new Uint32Array(n).fill(NONE);
    const keyWords = new Uint32Array(2 * n);
    for (let i = 0; i < n; i++) {
      keyWords[2 * i] = 1000 + i;
      keyWords[2 * i + 1] = rnd(3);
      const r = rnd(5);
      const placedOk = mode === UpdateMode.upsert || mode === UpdateMode.accum;
      status[i] = r < 2 && placedOk ? (r === 0 ? HkvStatus.inserted : HkvStatus.evicted) : r < 4 ? HkvStatus.updated : HkvStatus.none;
      if (status[i] !== HkvStatus.none) at[i] = rnd(slots);
    }
    const meta: number[] = [];
    for (let i = 0; i < n; i++) {
      // A placed key evicted later in the batch, from its own slot.
      if ((status[i] === HkvStatus.inserted || status[i] === HkvStatus.evicted) && rnd(3) === 0)
        meta.push(keyWords[2 * i] as number, keyWords[2 * i + 1] as number, 0, 0, at[i] as number);
      // An entry from before the batch.
      if (rnd(4) === 0) meta.push(5000 + i, 7, 0, 0, rnd(slots));
    }
    const rows = mode === UpdateMode.assignScores ? new Float32Array(0) : Float32Array.from({ length: n * dim }, (_, j) => j + 0.5);
    const evicted = meta.length / EV_WORDS;
    const batch = (): HostTierBatch => ({
      mode,
      status,
      slots: at,
      keyWords,
      rows,
      evMeta: Uint32Array.from(meta),
      evicted,
      evValues: new Float32Array(evicted * dim).fill(-1),
    });
    const host = Float32Array.from({ length: (slots - d0) * dim }, (_, j) => -100 - j);
    return { batch, host, dim, d0 };
  });

describe('host tier bookkeeping', () => {
  it('writes the host rows and evicted values the bigint-map reference writes', () => {
    fc.assert(
      fc.property(batches, ({ batch, host, dim, d0 }) => {
        const mine = batch();
        const theirs = batch();
        const hostMine = host.slice();
        const hostTheirs = host.slice();
        applyHostTier(mine, hostMine, dim, d0);
        reference(theirs, hostTheirs, dim, d0);
        expect(Array.from(hostMine)).toEqual(Array.from(hostTheirs));
        expect(Array.from(mine.evValues)).toEqual(Array.from(theirs.evValues));
      }),
      { numRuns: 300 },
    );
  });
});
