import { testGpu } from '@gpuhash/testing';
import { expect, it } from 'vitest';
import { HkvCache, bucketOf, digestOf, startWordOf } from '../src';

it('smoke', async () => {
  const gpu = await testGpu();
  const c = await HkvCache.create(gpu, { capacity: 256, dim: 2 });
  const keys = BigUint64Array.from({ length: 3 }, (_, i) => BigInt(i) * 0x1_0000_0001n + 7n);
  const vals = Float32Array.from({ length: 6 }, (_, i) => i);
  const r = await c.insertOrAssign(keys, vals);
  console.log(r.status);
  const st = (c as any).storage;
  const k = new Uint32Array(await gpu.readBytes(st.keys, 0, 256 * 8));
  const m = new Uint32Array(await gpu.readBytes(st.meta, 0, 2 * 36 * 4 + 16));
  for (let g = 0; g < 256; g++) if (k[2 * g] !== 0xffffffff) console.log('slot', g, k[2 * g], k[2 * g + 1], 'meta word', m[g >> 2]!.toString(16));
  for (const key of keys) { const lo = Number(key & 0xffffffffn), hi = Number(key >> 32n); console.log(lo, hi, bucketOf(lo, hi, 2), digestOf(lo, hi).toString(16), startWordOf(lo, hi)); }
  console.log([...m].map((x) => x.toString(16)).join(' '));
  const f = await c.find(keys);
  console.log(f.found);
  expect(1).toBe(1);
});
