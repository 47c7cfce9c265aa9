import type { TableModel } from '@gpuhash/testing';
import {
  awayBits,
  BUCKET_SLOTS,
  candidateBuckets,
  EMPTY_KEY,
  farBit,
  type HiveTable,
  HOME_SLOTS,
  homeOf,
  keyWord,
  splitPointerFor,
  stashLineOf,
  valueWord,
} from '../src';

export interface Layout {
  /** Live pairs as the buffers hold them. */
  pairs: Map<number, number>;
  /** Keys in the stash. */
  stashed: Set<number>;
  /** Live keys per table bucket. */
  bucketLoad: number[];
  /** Live keys in their home in their first bucket (where finds read one 32-byte sector). */
  atHome: number;
}

/**
 * Reads the table's buffers and checks, on the CPU, everything the protocol promises between
 * batches: a claimed slot holds a live key, a free slot is EMPTY; each key lies in one of its two
 * candidate buckets under the current split pointer (or in its stash line); buckets past the table
 * are empty; no key is stored twice; no lock is held; a key away from its first bucket, or from its
 * home there, or in the stash, has flagged it (overflow and stash bits, away filter).
 */
export async function checkLayout(table: HiveTable, what: string): Promise<Layout> {
  const snap = await table.debugSnapshot();
  const p = splitPointerFor(snap.buckets);
  const pairs = new Map<number, number>();
  const stashed = new Set<number>();
  const bucketLoad: number[] = [];
  let atHome = 0;
  const fail = (m: string) => {
    throw new Error(`${what}: ${m}`);
  };
  const total = snap.nalloc + snap.stashLines;
  for (let b = 0; b < total; b++) {
    const free = snap.meta[b] as number;
    const stash = b >= snap.nalloc;
    let load = 0;
    for (let s = 0; s < BUCKET_SLOTS; s++) {
      const g = b * BUCKET_SLOTS + s;
      const key = snap.slots[keyWord(g)] as number;
      const claimed = ((free >>> s) & 1) === 0;
      const live = key < 0xfffffffe;
      if (claimed !== live) fail(`bucket ${b} slot ${s}: key 0x${key.toString(16)} but the slot is ${claimed ? 'claimed' : 'free'}`);
      if (!claimed && key !== EMPTY_KEY) fail(`bucket ${b} slot ${s}: free slot holds 0x${key.toString(16)}`);
      if (!live) continue;
      load++;
      if (!stash && b >= snap.buckets) fail(`bucket ${b} is past the table's ${snap.buckets} buckets but holds 0x${key.toString(16)}`);
      if (pairs.has(key)) fail(`key 0x${key.toString(16)} is stored twice`);
      pairs.set(key, snap.slots[valueWord(g)] as number);
      // A key stored away from its first bucket must have flagged it (lookups skip unflagged ones):
      // the overflow bit and its bit in the far filter.
      const first = candidateBuckets(key, p)[0];
      const firstLock = snap.meta[snap.nalloc + snap.stashLines + first] as number;
      if (b !== first && (firstLock & 2) === 0)
        fail(`key 0x${key.toString(16)} is in bucket ${b} but its first bucket ${first} has no overflow bit`);
      if (b !== first && (firstLock & farBit(key)) === 0)
        fail(`key 0x${key.toString(16)} is in bucket ${b} but its first bucket ${first}'s far filter lacks its bit`);
      // Likewise away from its home in its first bucket: finds that miss it there skip the rest of the bucket.
      const home = homeOf(key);
      if (b === first && Math.floor(s / HOME_SLOTS) === home) atHome++;
      else if (b === first && (firstLock & awayBits(key)) >>> 0 !== awayBits(key))
        fail(
          `key 0x${key.toString(16)} is in bucket ${b} slot ${s}, away from home ${home} of its first bucket, whose away filter lacks its bit`,
        );
      if (stash) {
        stashed.add(key);
        if ((firstLock & 4) === 0) fail(`key 0x${key.toString(16)} is in the stash but its first bucket ${first} has no stash bit`);
        const line = stashLineOf(key, snap.stashLines);
        if (line !== b - snap.nalloc) fail(`stash key 0x${key.toString(16)} is in line ${b - snap.nalloc}, its line is ${line}`);
      } else {
        const [b1, b2] = candidateBuckets(key, p);
        if (b !== b1 && b !== b2) fail(`key 0x${key.toString(16)} is in bucket ${b}, its candidates are ${b1} and ${b2}`);
      }
    }
    if (!stash && b < snap.buckets) bucketLoad.push(load);
    if (!stash && ((snap.meta[snap.nalloc + snap.stashLines + b] as number) & 1) !== 0) fail(`bucket ${b}'s lock is held between batches`);
  }
  return { pairs, stashed, bucketLoad, atHome };
}

/** checkLayout, plus: the stored pairs are exactly the model's. */
export async function expectLayoutMatches(table: HiveTable, model: TableModel, what: string): Promise<Layout> {
  const layout = await checkLayout(table, what);
  if (layout.pairs.size !== model.size) throw new Error(`${what}: the table stores ${layout.pairs.size} keys, the model ${model.size}`);
  for (const [k, v] of model.map) {
    const got = layout.pairs.get(k);
    if (got !== v) throw new Error(`${what}: key 0x${k.toString(16)} holds ${got}, the model says ${v}`);
  }
  if (table.size !== model.size) throw new Error(`${what}: size ${table.size}, model ${model.size}`);
  return layout;
}
