import { wgslModule, xxhash32, xxhash32Module } from '@gpuhash/kernels';

/**
 * The seed of the shard hash. Shards are chosen with XXH32 under this seed: a function of its own,
 * unrelated to the hashes the tables use inside a shard (MurmurHash3's fmix32 and fmix64, Jenkins,
 * Hive's bit hashes, universal hashing; none of them XXH32), so the keys a shard receives spread
 * over its slots as evenly as any keys do.
 */
export const SHARD_SEED = 0x2545f491;

/** The largest number of shards (a shard index is kept in one byte per key). */
export const MAX_SHARDS = 256;

/** The shard hash of a u32 key, or of a u64 key given as (low, high) words. */
export function shardHash(lo: number, hi?: number, seed = SHARD_SEED): number {
  return hi === undefined ? xxhash32(lo >>> 0, seed) : xxhash32(lo >>> 0, xxhash32(hi >>> 0, seed));
}

/**
 * The shard of a key among `shards`: a u32 key as a number, a u64 key as a bigint.
 *
 * @example
 * ```ts
 * import { shardOf } from '@gpuhash/sharded';
 *
 * shardOf(42, 2); // 0 or 1, the same on every run, host and GPU alike
 * shardOf(1n << 40n, 4);
 * ```
 */
export function shardOf(key: number | bigint, shards: number, seed = SHARD_SEED): number {
  if (typeof key === 'bigint') return shardHash(Number(key & 0xffffffffn), Number((key >> 32n) & 0xffffffffn), seed) % shards;
  return shardHash(key, undefined, seed) % shards;
}

/**
 * WGSL twin of `shardHash`/`shardOf`: `fn shard_of(lo: u32, hi: u32, wide: bool, shards: u32, seed: u32) -> u32`.
 */
export const shardOfModule = wgslModule(
  'sharded.shard-of',
  /* wgsl */ `
fn shard_of(lo: u32, hi: u32, wide: bool, shards: u32, seed: u32) -> u32 {
  var h: u32;
  if (wide) { h = hash_xxhash32(lo, hash_xxhash32(hi, seed)); } else { h = hash_xxhash32(lo, seed); }
  return h % shards;
}
`,
  [xxhash32Module],
);
