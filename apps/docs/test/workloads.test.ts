import { Op } from '@gpuhash/core';
import { describe, expect, it } from 'vitest';
import { hitStream, missStream, valueFor } from '../lib/playground/keys';
import type { PlaygroundTable } from '../lib/playground/tables';
import { batchSizes, expectedFinalSize, maxSize, mixedBatch, mixedSplit, runWorkload } from '../lib/playground/workloads';

/** A CPU table with the playground's interface; `corrupt` makes it answer wrongly for some keys. */
function cpuTable(capacity: number, corrupt: (key: number) => boolean = () => false, withApply = true): PlaygroundTable {
  const map = new Map<number, number>();
  const table: PlaygroundTable = {
    capacity,
    get size() {
      return map.size;
    },
    get loadFactor() {
      return map.size / capacity;
    },
    async insert(keys, values) {
      for (let i = 0; i < keys.length; i++) if (!map.has(keys[i] as number)) map.set(keys[i] as number, values[i] as number);
      return { failed: 0 };
    },
    async find(keys) {
      const values = new Uint32Array(keys.length);
      const found = new Uint8Array(keys.length);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as number;
        if (!map.has(k) || corrupt(k)) continue;
        found[i] = 1;
        values[i] = map.get(k) as number;
      }
      return { values, found };
    },
    async erase(keys) {
      let erased = 0;
      for (const k of keys) if (map.delete(k)) erased++;
      return erased;
    },
    destroy: () => map.clear(),
  };
  if (withApply) {
    table.apply = async (ops, keys, values) => {
      const status = new Uint8Array(keys.length);
      const out = new Uint32Array(keys.length);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as number;
        if (ops[i] === Op.insert) {
          if (map.has(k)) continue;
          map.set(k, values[i] as number);
          status[i] = 1;
        } else if (ops[i] === Op.erase) {
          status[i] = map.delete(k) ? 1 : 0;
        } else if (map.has(k) && !corrupt(k)) {
          status[i] = 1;
          out[i] = map.get(k) as number;
        }
      }
      return { values: out, status };
    };
  }
  return table;
}

let clock = 0;
const now = () => (clock += 0.5);

describe('playground keys', () => {
  it('hit and miss streams never share a key and avoid the reserved top of the range', () => {
    const hits = new Set(hitStream().take(50_000));
    const misses = missStream().take(50_000);
    expect(hits.size).toBe(50_000);
    expect(misses.filter((k) => hits.has(k)).length).toBe(0);
    expect(Math.max(...hits, ...misses)).toBeLessThan(0xfffffff0);
  });

  it('stores a value that is not the key itself', () => {
    for (const k of hitStream().take(1000)) expect(valueFor(k)).not.toBe(k);
  });
});

describe('playground workloads', () => {
  it('splits sizes into even batches and mixed batches into 30% finds, 20% erases, the rest inserts', () => {
    expect(batchSizes(2048, 16)).toEqual(Array(16).fill(128));
    expect(batchSizes(10, 4)).toEqual([3, 3, 2, 2]);
    expect(batchSizes(3, 16)).toEqual([1, 1, 1]);
    expect(mixedSplit(128)).toEqual({ inserts: 65, finds: 38, erases: 25 });
    expect(mixedSplit(1)).toEqual({ inserts: 1, finds: 0, erases: 0 });
    expect(maxSize('insert', 4096, 0.95)).toBe(3891);
    expect(maxSize('mixed', 4096, 0.95)).toBe(3276);
  });

  it('bulk insert: n keys into C slots gives load n/C, every key found with its value', async () => {
    const r = await runWorkload(cpuTable(4096), { workload: 'insert', capacity: 4096, size: 2048 }, { now });
    expect(r).toMatchObject({
      size: 2048,
      expectedSize: 2048,
      loadFactor: 0.5,
      found: 2048,
      expectedFound: 2048,
      mismatches: 0,
      timedOps: 2048,
    });
    expect(r.steps).toHaveLength(16);
    expect(r.steps.at(-1)?.loadFactor).toBe(0.5);
    expect(r.steps[0]?.loadFactor).toBe(128 / 4096);
  });

  it('find hits and find misses count exactly what they should', async () => {
    const hits = await runWorkload(cpuTable(4096), { workload: 'find-hits', capacity: 4096, size: 2048 }, { now });
    expect(hits).toMatchObject({ found: 2048, expectedFound: 2048, mismatches: 0, loadFactor: 0.5 });
    const misses = await runWorkload(cpuTable(4096), { workload: 'find-misses', capacity: 4096, size: 2048 }, { now });
    expect(misses).toMatchObject({ found: 0, expectedFound: 0, mismatches: 0, loadFactor: 0.5 });
  });

  it('mixed batches: the final size matches the model and every op succeeds, with or without apply', async () => {
    for (const withApply of [true, false]) {
      const r = await runWorkload(cpuTable(4096, undefined, withApply), { workload: 'mixed', capacity: 4096, size: 2048 }, { now });
      expect(r).toMatchObject({ size: 1664, expectedSize: 1664, found: 16 * 38, expectedFound: 16 * 38, mismatches: 0, timedOps: 2048 });
      expect(expectedFinalSize('mixed', 2048)).toBe(1664);
    }
  });

  it('counts a wrong answer as a mismatch', async () => {
    const broken = (k: number) => k % 7 === 0;
    const keys = hitStream().take(2048);
    const expected = keys.filter(broken).length;
    const r = await runWorkload(cpuTable(4096, broken), { workload: 'find-hits', capacity: 4096, size: 2048 }, { now });
    expect(r.mismatches).toBe(expected);
    expect(r.found).toBe(2048 - expected);
  });

  it('draws finds and erases of one mixed batch from distinct present keys', () => {
    const live = Array.from(hitStream().take(100));
    const before = new Set(live);
    let seed = 1;
    const b = mixedBatch(100, live, missStream().take(mixedSplit(100).inserts), () => (seed = (seed * 48271) % 2147483647) / 2147483647);
    const chosen = b.keys.filter((_, i) => b.ops[i] !== Op.insert);
    expect(new Set(chosen).size).toBe(chosen.length);
    for (const k of chosen) expect(before.has(k)).toBe(true);
    expect(live).toHaveLength(100 + b.inserted - b.erased);
  });
});
