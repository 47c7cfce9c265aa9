import { createRng } from '@gpuhash/testing';
import { describeChecks } from '@gpuhash/testing/vitest';
import { describe, expect, it } from 'vitest';
import {
  bitHash1,
  bitHash2,
  fmix32,
  fmix64,
  fmix64U32,
  fmix64Words,
  jenkins,
  jenkinsSeeded,
  randomUniversalParams,
  UNIVERSAL_PRIME,
  u64FromWords,
  u64ToWords,
  universalHash,
  universalHashModP,
  xxhash32,
} from '../src/hash';
import { hashChecks } from './hash.checks';

describeChecks(hashChecks);

const P = UNIVERSAL_PRIME;
const MASK64 = (1n << 64n) - 1n;
const bytes = (s: string) => new TextEncoder().encode(s);
const le32 = (k: number) => new Uint8Array(new Uint32Array([k]).buffer);
const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
const rotl64 = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & MASK64;

/** MurmurHash3_x86_32, byte-wise, finishing with the fmix32 under test. */
function murmur3x86_32(data: Uint8Array, seed: number): number {
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let h = seed | 0;
  const blocks = data.length >> 2;
  for (let i = 0; i < blocks; i++) {
    const k = Math.imul(rotl(Math.imul(view.getUint32(4 * i, true), c1), 15), c2);
    h = (Math.imul(rotl(h ^ k, 13), 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  for (let i = data.length - 1; i >= 4 * blocks; i--) k = (k << 8) | (data[i] as number);
  if (data.length & 3) h ^= Math.imul(rotl(Math.imul(k, c1), 15), c2);
  return fmix32(h ^ data.length);
}

/** MurmurHash3_x64_128 for inputs shorter than 16 bytes (tail only), finishing with the fmix64 under test. */
function murmur3x64_128(data: Uint8Array, seed: number): [bigint, bigint] {
  if (data.length >= 16) throw new Error('tail-only reference');
  const c1 = 0x87c37b91114253d5n;
  const c2 = 0x4cf5ad432745937fn;
  let h1 = BigInt(seed >>> 0);
  let h2 = h1;
  let k1 = 0n;
  let k2 = 0n;
  for (let i = data.length - 1; i >= 8; i--) k2 = (k2 << 8n) | BigInt(data[i] as number);
  for (let i = Math.min(data.length, 8) - 1; i >= 0; i--) k1 = (k1 << 8n) | BigInt(data[i] as number);
  if (data.length > 8) h2 ^= (rotl64((k2 * c2) & MASK64, 33n) * c1) & MASK64;
  if (data.length > 0) h1 ^= (rotl64((k1 * c1) & MASK64, 31n) * c2) & MASK64;
  const len = BigInt(data.length);
  h1 ^= len;
  h2 ^= len;
  h1 = (h1 + h2) & MASK64;
  h2 = (h2 + h1) & MASK64;
  h1 = fmix64(h1);
  h2 = fmix64(h2);
  h1 = (h1 + h2) & MASK64;
  h2 = (h2 + h1) & MASK64;
  return [h1, h2];
}

/** XXH32 over any byte string, written from the specification (stripes, 4-byte lanes, single bytes). */
function xxh32Bytes(data: Uint8Array, seed: number): number {
  const [P1, P2, P3, P4, P5] = [0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f, 0x165667b1];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const round = (acc: number, lane: number) => Math.imul(rotl((acc + Math.imul(lane, P2)) | 0, 13), P1);
  const len = data.length;
  let i = 0;
  let h: number;
  if (len >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    for (; i + 16 <= len; i += 16) {
      v1 = round(v1, view.getUint32(i, true));
      v2 = round(v2, view.getUint32(i + 4, true));
      v3 = round(v3, view.getUint32(i + 8, true));
      v4 = round(v4, view.getUint32(i + 12, true));
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + P5) | 0;
  }
  h = (h + len) | 0;
  for (; i + 4 <= len; i += 4) h = Math.imul(rotl((h + Math.imul(view.getUint32(i, true), P3)) | 0, 17), P4);
  for (; i < len; i++) h = Math.imul(rotl((h + Math.imul(data[i] as number, P5)) | 0, 11), P1);
  h = Math.imul(h ^ (h >>> 15), P2);
  h = Math.imul(h ^ (h >>> 13), P3);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Pearson's statistic of `keys` hashed into `buckets` cells by `cell`. */
function chiSquare(keys: ArrayLike<number>, buckets: number, cell: (k: number) => number): number {
  const counts = new Float64Array(buckets);
  for (let i = 0; i < keys.length; i++) {
    const c = cell(keys[i] as number);
    counts[c] = (counts[c] ?? 0) + 1;
  }
  const e = keys.length / buckets;
  let x = 0;
  for (const c of counts) x += (c - e) ** 2 / e;
  return x;
}

/** Worst |P(output bit j flips | input bit i flips) - 1/2| over all 32 x 32 pairs. */
function avalancheBias(f: (k: number) => number, samples: number, seed: number): number {
  const rng = createRng(seed);
  const flips = new Float64Array(32 * 32);
  for (let s = 0; s < samples; s++) {
    const x = rng.u32();
    const h = f(x);
    for (let i = 0; i < 32; i++) {
      const d = (f((x ^ (1 << i)) >>> 0) ^ h) >>> 0;
      for (let j = 0; j < 32; j++) flips[i * 32 + j] = (flips[i * 32 + j] ?? 0) + ((d >>> j) & 1);
    }
  }
  let worst = 0;
  for (const c of flips) worst = Math.max(worst, Math.abs(c / samples - 0.5));
  return worst;
}

// 255 degrees of freedom: mean 255, sd 22.6; 380 is exceeded by chance with probability ~1e-6.
const CHI2_255 = 380;
const SEQUENTIAL = Uint32Array.from({ length: 1 << 16 }, (_, i) => i);

const hashes32: Record<string, (k: number) => number> = {
  fmix32,
  bitHash1,
  bitHash2,
  jenkins,
  'jenkinsSeeded(., 1)': (k) => jenkinsSeeded(k, 1),
  'jenkinsSeeded(., 7)': (k) => jenkinsSeeded(k, 7),
  xxhash32: (k) => xxhash32(k),
  'xxhash32(., 0x9747b28c)': (k) => xxhash32(k, 0x9747b28c),
  'fmix64U32(k, 0)': (k) => fmix64U32(k, 0),
  'fmix64U32(0, k)': (k) => fmix64U32(0, k),
};

describe('fmix32', () => {
  it('fixes 0 and finishes MurmurHash3_x86_32 as the reference library does', () => {
    expect(fmix32(0)).toBe(0);
    // Outputs of the reference MurmurHash3_x86_32.
    const vectors: [Uint8Array, number, number][] = [
      [bytes(''), 0, 0],
      [bytes(''), 1, 0x514e28b7],
      [bytes(''), 0xffffffff, 0x81f16f39],
      [new Uint8Array(4), 0, 0x2362f9de],
      [bytes('aaaa'), 0x9747b28c, 0x5a97808a],
      [bytes('Hello, world!'), 0x9747b28c, 0x24884cba],
    ];
    for (const [data, seed, want] of vectors) expect(murmur3x86_32(data, seed), `${data} seed ${seed}`).toBe(want);
  });
});

describe('xxhash32', () => {
  it('the byte-wise reference reproduces the reference library', () => {
    const vectors: [string, number, number][] = [
      ['', 0, 0x02cc5d05],
      ['a', 0, 0x550d7456],
      ['abc', 0, 0x32d153ff],
      ['0123456789abcdef0123', 7, 0x52e4bc50],
      ['Nobody inspects the spammish repetition', 0, 0xe2293b2f],
    ];
    for (const [s, seed, want] of vectors) expect(xxh32Bytes(bytes(s), seed), `'${s}'`).toBe(want);
  });

  it('equals XXH32 of the key as 4 little-endian bytes', () => {
    // Reference-library outputs for 4-byte inputs.
    const vectors: [number, number, number][] = [
      [0, 0, 0x08d6d969],
      [1, 0, 0xf3bb7693],
      [0xffffffff, 0, 0x04079e5f],
      [0x80000000, 0, 0x59fbd9c1],
      [0x12345678, 0x9747b28c, 0x84519465],
      [0, 1, 0x77f498c8],
      [42, 0xdeadbeef, 0x42fffcbb],
    ];
    for (const [k, seed, want] of vectors) {
      expect(xxhash32(k, seed)).toBe(want);
      expect(xxh32Bytes(le32(k), seed)).toBe(want);
    }
    const rng = createRng(21);
    for (let t = 0; t < 20_000; t++) {
      const k = rng.u32();
      const seed = rng.u32();
      expect(xxhash32(k, seed)).toBe(xxh32Bytes(le32(k), seed));
    }
  });
});

describe('fmix64', () => {
  it('fixes 0 and finishes MurmurHash3_x64_128 as the reference library does', () => {
    expect(fmix64(0n)).toBe(0n);
    const vectors: [Uint8Array, number, bigint, bigint][] = [
      [bytes(''), 0, 0n, 0n],
      [bytes(''), 1, 0x4610abe56eff5cb5n, 0x51622daa78f83583n],
      [Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8), 0, 0x9ce80ca5ef93bfdcn, 0xc567e5e6b655ac07n],
      [bytes('hello'), 0, 0xcbd8a7b341bd9b02n, 0x5b1e906a48ae1d19n],
      [bytes('Hello, world!'), 42, 0x01c8726001fdd5c4n, 0x722607f66d95c21bn],
      [new Uint8Array(8).fill(0xff), 0x9747b28c, 0xcc8afd4d0880fdb5n, 0xefd35324b21c3e22n],
    ];
    for (const [data, seed, w1, w2] of vectors) expect(murmur3x64_128(data, seed), `${data} seed ${seed}`).toEqual([w1, w2]);
  });

  it('the word twins agree with the bigint one', () => {
    const rng = createRng(22);
    for (let t = 0; t < 5_000; t++) {
      const [lo, hi] = [rng.u32(), rng.u32()];
      const h = fmix64(u64FromWords(lo, hi));
      expect(fmix64Words(lo, hi)).toEqual(u64ToWords(h));
      expect(fmix64U32(lo, hi)).toBe(Number((h ^ (h >> 32n)) & 0xffffffffn));
    }
  });
});

describe('universal hash', () => {
  it('matches exact small-number arithmetic and known residues', () => {
    const rng = createRng(23);
    for (let t = 0; t < 5_000; t++) {
      // a * k + b < 2^53: exact in doubles.
      const [a, k, b] = [1 + rng.below(1 << 26), rng.below(1 << 26), rng.below(P)];
      const buckets = 1 + rng.below(1 << 20);
      expect(universalHashModP(k, a, b)).toBe((a * k + b) % P);
      expect(universalHash(k, a, b, buckets)).toBe(((a * k + b) % P) % buckets);
    }
    expect(universalHashModP(P, 12345, 678)).toBe(678); // k = p vanishes
    expect(universalHashModP(P - 1, P - 1, 0)).toBe(1); // (-1)^2
    expect(universalHashModP(0xffffffff, 0xffffffff, 0xffffffff)).toBe(20); // 2^32 - 1 = 4 mod p: 4 * 4 + 4
    expect(universalHashModP(0xffffffff, 1, P - 4)).toBe(0); // 4 + (p - 4)
    expect(() => universalHash(1, 1, 0, 0)).toThrow(RangeError);
  });

  it('draws parameters in range, rejecting out-of-range words', () => {
    const script = [0, P, 0xffffffff, 5, P, P + 3, 7];
    let i = 0;
    expect(randomUniversalParams(() => script[i++] as number)).toEqual({ a: 5, b: 7 });
    const rng = createRng(24);
    for (let t = 0; t < 1000; t++) {
      const { a, b } = randomUniversalParams(rng.u32);
      expect(a >= 1 && a < P && b >= 0 && b < P).toBe(true);
    }
  });
});

describe('hash quality', () => {
  it('jenkinsSeeded(k, 0) is jenkins(k), and other seeds differ', () => {
    const rng = createRng(25);
    for (let t = 0; t < 1000; t++) {
      const k = rng.u32();
      expect(jenkinsSeeded(k, 0)).toBe(jenkins(k));
    }
    expect(jenkinsSeeded(12345, 1)).not.toBe(jenkinsSeeded(12345, 2));
  });

  it('the bijective mixers never collide (a random function would, ~128 times in 2^20 keys)', () => {
    const keys = createRng(26).distinctU32(1 << 20);
    const bijections: Record<string, (k: number) => number> = {
      fmix32,
      bitHash1,
      bitHash2,
      jenkins,
      'jenkinsSeeded(., 5)': (k) => jenkinsSeeded(k, 5),
      'xxhash32(., 77)': (k) => xxhash32(k, 77),
    };
    for (const [name, f] of Object.entries(bijections)) {
      const hashed = keys.map(f).sort();
      let collisions = 0;
      for (let i = 1; i < hashed.length; i++) if (hashed[i] === hashed[i - 1]) collisions++;
      expect(collisions, name).toBe(0);
    }
  });

  it('full-avalanche mixers stay within 0.05 of an even flip rate', () => {
    const mixers: Record<string, (k: number) => number> = { fmix32, bitHash1, bitHash2, xxhash32: (k) => xxhash32(k, 3) };
    for (const [name, f] of Object.entries(mixers)) expect(avalancheBias(f, 1 << 14, 27), name).toBeLessThan(0.05);
  });

  it.each(Object.entries(hashes32))('%s spreads 2^16 sequential keys evenly over 256 buckets (low and high bits)', (_, f) => {
    expect(chiSquare(SEQUENTIAL, 256, (k) => f(k) & 255)).toBeLessThan(CHI2_255);
    expect(chiSquare(SEQUENTIAL, 256, (k) => f(k) >>> 24)).toBeLessThan(CHI2_255);
  });

  it('universal hash spreads 2^16 sequential keys evenly over 256 buckets', () => {
    const rng = createRng(28);
    for (let t = 0; t < 4; t++) {
      const { a, b } = randomUniversalParams(rng.u32);
      expect(
        chiSquare(SEQUENTIAL, 256, (k) => universalHash(k, a, b, 256)),
        `a=${a} b=${b}`,
      ).toBeLessThan(CHI2_255);
    }
  });

  it('two-choice pairs are close to independent (joint 16 x 16 buckets)', () => {
    const pairs: [string, (k: number) => number, (k: number) => number][] = [
      ['bitHash1/bitHash2', bitHash1, bitHash2],
      ['jenkins seeds 0/1', jenkins, (k) => jenkinsSeeded(k, 1)],
      ['jenkins seeds 1/2', (k) => jenkinsSeeded(k, 1), (k) => jenkinsSeeded(k, 2)],
    ];
    for (const [name, f, g] of pairs) {
      expect(
        chiSquare(SEQUENTIAL, 256, (k) => ((f(k) & 15) << 4) | (g(k) & 15)),
        name,
      ).toBeLessThan(CHI2_255);
    }
  });
});
