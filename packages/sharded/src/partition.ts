import { shardHash } from './hash';

/** Typed arrays a batch is made of. */
export type BatchArray = Uint32Array | Uint8Array | Float32Array | BigUint64Array;

type Ctor<T extends BatchArray> = { new (length: number): T };

/**
 * A host batch split by shard: the shard of every key (one byte each), how many keys each shard
 * gets, and the operations that cut the batch's arrays into per-shard arrays (keeping the batch's
 * order within each shard) and merge per-shard answers back into the batch's order.
 */
export class HostPartition {
  readonly n: number;
  readonly shards: number;
  /** The shard of each key, in batch order. */
  readonly ids: Uint8Array;
  /** Keys per shard. */
  readonly counts: Uint32Array;

  /** Partitions `words`: u32 keys (wordsPerKey 1) or u64 keys as (low, high) pairs (2). */
  constructor(words: Uint32Array, wordsPerKey: 1 | 2, shards: number, seed: number) {
    const n = words.length / wordsPerKey;
    this.n = n;
    this.shards = shards;
    const ids = new Uint8Array(n);
    const counts = new Uint32Array(shards);
    if (shards === 1) counts[0] = n;
    else assignShards(words, wordsPerKey, ids, counts, seed);
    this.ids = ids;
    this.counts = counts;
  }

  /** The shards that get at least one key. */
  get touched(): number[] {
    const out: number[] = [];
    for (let s = 0; s < this.shards; s++) if ((this.counts[s] as number) > 0) out.push(s);
    return out;
  }

  /** `data` (`width` elements per key) cut into one array per shard, each in batch order. */
  split<T extends BatchArray>(data: T, width = 1): T[] {
    const C = data.constructor as Ctor<T>;
    const parts = Array.from(this.counts, (c) => new C(c * width));
    if (this.shards === 1) {
      (parts[0] as T).set(data as never);
      return parts;
    }
    const cursor = new Uint32Array(this.shards);
    const ids = this.ids;
    if (width === 1) {
      for (let i = 0; i < this.n; i++) {
        const s = ids[i] as number;
        const at = cursor[s] as number;
        cursor[s] = at + 1;
        (parts[s] as T)[at] = data[i] as never;
      }
    } else {
      for (let i = 0; i < this.n; i++) {
        const s = ids[i] as number;
        const at = (cursor[s] as number) * width;
        cursor[s] = (cursor[s] as number) + 1;
        const part = parts[s] as T;
        for (let w = 0; w < width; w++) part[at + w] = data[i * width + w] as never;
      }
    }
    return parts;
  }

  /**
   * Per-shard answers (`width` elements per key) put back in batch order. A missing part (a shard
   * that failed) leaves its entries zero.
   */
  merge<T extends BatchArray>(parts: readonly (T | undefined)[], C: Ctor<T>, width = 1, into?: T): T {
    // A caller's array (a find's out option): entries of failed shards keep what it held.
    const out = into ?? new C(this.n * width);
    if (this.shards === 1) {
      if (parts[0]) out.set(parts[0] as never);
      return out;
    }
    const cursor = new Uint32Array(this.shards);
    const ids = this.ids;
    for (let i = 0; i < this.n; i++) {
      const s = ids[i] as number;
      const part = parts[s];
      const at = (cursor[s] as number) * width;
      cursor[s] = (cursor[s] as number) + 1;
      if (!part) continue;
      if (width === 1) out[i] = part[at] as never;
      else for (let w = 0; w < width; w++) out[i * width + w] = part[at + w] as never;
    }
    return out;
  }

  /** The batch indices of shard `s`'s keys, ascending. */
  indicesOf(s: number): Uint32Array {
    const out = new Uint32Array(this.counts[s] as number);
    let o = 0;
    for (let i = 0; i < this.n; i++) {
      if (this.ids[i] === s) out[o++] = i;
    }
    return out;
  }

  /** The batch indices of the keys of any of `shards`, ascending. */
  indicesOfAny(shards: readonly number[]): Uint32Array {
    const wanted = new Uint8Array(this.shards);
    let total = 0;
    for (const s of shards) {
      wanted[s] = 1;
      total += this.counts[s] as number;
    }
    const out = new Uint32Array(total);
    let o = 0;
    for (let i = 0; i < this.n; i++) if (wanted[this.ids[i] as number]) out[o++] = i;
    return out;
  }

  /** Shard-local indices of shard `s` (as a shard reports failures) turned into batch indices. */
  toBatchIndices(s: number, local: Uint32Array): Uint32Array {
    if (local.length === 0) return local;
    const all = this.indicesOf(s);
    return local.map((j) => all[j] as number);
  }
}

/** Sorted union of index lists. */
export function mergeIndices(lists: readonly Uint32Array[]): Uint32Array {
  const total = lists.reduce((c, l) => c + l.length, 0);
  const out = new Uint32Array(total);
  let o = 0;
  for (const l of lists) {
    out.set(l, o);
    o += l.length;
  }
  return out.sort();
}

/**
 * The shard of every key into `ids`, and the keys per shard into `counts`. A function of its own
 * rather than a loop in the constructor.
 */
function assignShards(words: Uint32Array, wordsPerKey: 1 | 2, ids: Uint8Array, counts: Uint32Array, seed: number): void {
  const n = ids.length;
  const shards = counts.length;
  // h % shards for a u32 h, in small-integer arithmetic: (2q + r) mod m with q = h >>> 1, r = h & 1
  // (a double modulo, which h >= 2^31 would take, costs several times more).
  const mod = (h: number) => ((((h >>> 1) % shards) << 1) + (h & 1)) % shards;
  if (wordsPerKey === 1) {
    for (let i = 0; i < n; i++) {
      const s = mod(shardHash(words[i] as number, undefined, seed));
      ids[i] = s;
      counts[s] = (counts[s] as number) + 1;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const s = mod(shardHash(words[2 * i] as number, words[2 * i + 1] as number, seed));
      ids[i] = s;
      counts[s] = (counts[s] as number) + 1;
    }
  }
}
