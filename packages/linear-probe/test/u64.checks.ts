import { type CheckContext, defineChecks, expectMatchesModel, expectSameArrays, type Rng, TableModel } from '@gpuhash/testing';
import { LinearProbeTable, Op } from '../src';

function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

/**
 * Distinct u64 keys that stress the two-word layout: keys sharing a low or a high word, and the
 * all-ones values that u32 tables reserve (every u64 is a legal key).
 */
function u64Universe(rng: Rng, n: number): BigUint64Array {
  const seen = new Set<bigint>();
  const out = new BigUint64Array(n);
  const special = [0xffffffffffffffffn, 0xfffffffffffffffen, 0xfffffffffffffffdn, 0n, 1n, 0xffffffffn, 0xffffffff00000000n];
  let i = 0;
  for (const k of special) if (i < n && !seen.has(k)) seen.add((out[i++] = k));
  const lows = rng.u32Array(8);
  while (i < n) {
    const lo = rng.below(3) === 0 ? (lows[rng.below(8)] as number) : rng.u32();
    const hi = rng.below(3) === 0 ? (lows[rng.below(8)] as number) : rng.u32();
    const k = (BigInt(hi) << 32n) | BigInt(lo);
    if (seen.has(k)) continue;
    seen.add(k);
    out[i++] = k;
  }
  return out;
}

function pick(rng: Rng, from: BigUint64Array, n: number): BigUint64Array {
  const out = new BigUint64Array(n);
  for (let i = 0; i < n; i++) out[i] = from[rng.below(from.length)] as bigint;
  return out;
}

async function u64Sequence({ gpu, rng, scale }: CheckContext): Promise<void> {
  const keys = u64Universe(rng, 2000 * scale);
  const table = await LinearProbeTable.create(gpu, { capacity: 64, keyType: 'u64', maxLoadFactor: 0.85 });
  const model = new TableModel<bigint>();
  for (let step = 0; step < 20; step++) {
    const n = 1 + rng.below(600 * scale);
    const kind = rng.below(4);
    const batch = pick(rng, keys, n);
    if (kind <= 1) {
      const values = rng.u32Array(n);
      const assign = kind === 1;
      const before = model.size;
      const r = assign ? await table.insertOrAssign(batch, values) : await table.insert(batch, values);
      const allowed = model.insert(batch, values, assign);
      expect(r.inserted === model.size - before, `step ${step}: inserted ${r.inserted}, model added ${model.size - before}`);
      const { values: got, found } = await table.find(batch);
      expectMatchesModel(batch, found, got, model, allowed);
    } else if (kind === 2) {
      const erased = await table.erase(batch);
      const want = model.erase(batch);
      expect(erased === want, `step ${step}: erase removed ${erased}, model ${want}`);
    } else {
      const { values: got, found } = await table.find(batch);
      expectMatchesModel(batch, found, got, model);
    }
    expect(table.size === model.size, `step ${step}: size ${table.size}, model ${model.size}`);
  }
  const all = await table.retrieveAll();
  expect(all.keys.length === model.size, `export has ${all.keys.length} pairs, model ${model.size}`);
  const seen = new Set<bigint>();
  for (let i = 0; i < all.keys.length; i++) {
    const k = all.keys[i] as bigint;
    expect(!seen.has(k), `key 0x${k.toString(16)} exported twice`);
    seen.add(k);
    expect(model.map.get(k) === all.values[i], `exported 0x${k.toString(16)} -> ${all.values[i]}, model ${model.map.get(k)}`);
  }
  const stats = await table.stats();
  expect(stats.size === model.size && stats.rehashes > 0, `stats ${JSON.stringify(stats)}`);
  table.destroy();
}

export const u64Checks = defineChecks('linear-probe/u64', [
  { name: 'u64 keys: random sequences with growth match a CPU model; every 64-bit value is a key', run: u64Sequence },
  {
    name: 'u64 keys: word pairs, device-resident batches and mixed batches agree',
    async run({ gpu, rng, scale }) {
      const table = await LinearProbeTable.create(gpu, { capacity: 8192 * scale, keyType: 'u64' });
      const keys = u64Universe(rng, 3000 * scale);
      const words = new Uint32Array(keys.buffer.slice(0));
      const values = rng.u32Array(keys.length);
      const dk = gpu.upload(words);
      const dv = gpu.upload(values);
      expect((await table.insert(dk, dv)).inserted === keys.length, 'device insert count');
      const out = await table.find(words);
      expectSameArrays('find by word pairs', out.values, values);
      // Mixed batch over distinct keys: half of them erased, the rest found, plus new inserts.
      const fresh = u64Universe(rng, keys.length + 500 * scale).subarray(keys.length);
      const batch = new BigUint64Array(keys.length + fresh.length);
      batch.set(keys);
      batch.set(fresh, keys.length);
      const ops = Uint8Array.from(batch, (_, i) => (i >= keys.length ? Op.insert : i % 2 ? Op.erase : Op.find));
      const result = await table.apply({ ops, keys: batch, values: new Uint32Array(batch.length).fill(7) });
      for (let i = 0; i < batch.length; i++) {
        expect(result.status[i] === 1, `apply op ${ops[i]} at ${i}: status ${result.status[i]}`);
        if (ops[i] === Op.find) expect(result.values[i] === values[i], `apply find ${i}: ${result.values[i]}`);
      }
      expect(table.size === keys.length - Math.floor(keys.length / 2) + fresh.length, `size ${table.size} after apply`);
      for (const a of [dk, dv]) a.destroy();
      table.destroy();
    },
  },
  {
    name: 'u64 keys: finds in window order over slots in 4 bindings match a CPU model',
    async run({ gpu, rng, scale }) {
      const capacity = 2048 * scale;
      const keys = u64Universe(rng, capacity);
      const stored = keys.subarray(0, Math.floor(capacity * 0.85));
      const options = { capacity, keyType: 'u64', growth: false, maxLoadFactor: 1, windows: 4, windowOrder: 'always' } as const;
      const table = await LinearProbeTable.create(gpu, options);
      const model = new TableModel<bigint>();
      const values = rng.u32Array(stored.length);
      expect((await table.insert(stored, values)).failed.length === 0, 'a key was not placed at load 0.85');
      model.insert(stored, values, false);
      for (const n of [1, 1025 + rng.below(1000 * scale), keys.length]) {
        const probe = pick(rng, keys, n);
        const { values: got, found } = await table.find(probe);
        expectMatchesModel(probe, found, got, model);
      }
      table.destroy();
    },
  },
]);
