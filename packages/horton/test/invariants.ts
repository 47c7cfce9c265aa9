import { bchtSecondBucket, ENTRIES, ENTRY_BITS, type HortonTable, primaryBucket, REMAP_KEY, SLOTS, secondaryBucket, tagOf } from '../src';

/** What `checkLayout` found in a table's buckets. */
export interface Layout {
  /** Every live pair. */
  pairs: Map<number, number>;
  /** Keys stored outside their primary bucket. */
  away: number;
  typeB: number;
  /** Type B buckets with a free slot and a remapped key (repatriation would move it back). */
  repatriable: number;
}

const entryOf = (rea: number, t: number) => (rea >>> (ENTRY_BITS * t)) & ((1 << ENTRY_BITS) - 1);

/**
 * Downloads a table's buckets and checks the layout invariants on the CPU with the hash twins:
 * no key twice; Horton: every key in its primary bucket or in the secondary bucket its primary
 * bucket's remap entry names (that bucket Type B), every set entry used by some key, and with
 * repatriation no Type B bucket without an entry set; BCHT: every key in one of its two buckets,
 * no Type B bucket. Throws naming the first violation.
 */
export async function checkLayout(table: HortonTable, what: string): Promise<Layout> {
  const words = await table.bucketWords();
  const buckets = table.buckets;
  const mask = buckets - 1;
  const seed = table.hashSeed;
  const fail = (m: string): never => {
    throw new Error(`${what}: ${m}`);
  };
  const pairs = new Map<number, number>();
  const isB = (b: number) => words[16 * b + 14] === REMAP_KEY;
  let away = 0;
  let typeB = 0;
  let repatriable = 0;
  const used = new Set<number>();
  for (let b = 0; b < buckets; b++) {
    if (isB(b)) {
      typeB++;
      if (table.mode === 'bcht') fail(`bucket ${b} is Type B in BCHT mode`);
    }
    for (let s = 0; s < SLOTS; s++) {
      const k = words[16 * b + 2 * s] as number;
      if (k >= REMAP_KEY) continue;
      if (pairs.has(k)) fail(`key ${k} is stored twice`);
      pairs.set(k, words[16 * b + 2 * s + 1] as number);
      const p = primaryBucket(k, mask, seed);
      if (p === b) continue;
      away++;
      if (table.mode === 'bcht') {
        if (bchtSecondBucket(k, mask, seed) !== b) fail(`key ${k} in bucket ${b}, neither of its buckets (${p})`);
        continue;
      }
      if (!isB(p)) fail(`key ${k} in bucket ${b} but its primary bucket ${p} is Type A`);
      const t = tagOf(k, seed);
      const e = entryOf(words[16 * p + 15] as number, t);
      if (e === 0) fail(`key ${k} in bucket ${b}: entry ${t} of its primary bucket ${p} is unset`);
      const y = secondaryBucket(p, t, e, mask);
      if (y !== b) fail(`key ${k} in bucket ${b}: entry ${t} of bucket ${p} names function ${e}, bucket ${y}`);
      used.add(p * ENTRIES + t);
    }
  }
  for (let b = 0; b < buckets && table.mode === 'horton'; b++) {
    if (!isB(b)) continue;
    const rea = words[16 * b + 15] as number;
    let set = 0;
    for (let t = 0; t < ENTRIES; t++) {
      if (entryOf(rea, t) === 0) continue;
      set++;
      if (!used.has(b * ENTRIES + t)) fail(`entry ${t} of bucket ${b} is set but no key uses it`);
    }
    if (set === 0 && table.repatriate) fail(`bucket ${b} is Type B with no entry set (repatriation on)`);
    let free = 0;
    for (let s = 0; s < SLOTS - 1; s++) if (words[16 * b + 2 * s] === 0xffffffff) free++;
    if (free > 0 && set > 0) repatriable++;
  }
  return { pairs, away, typeB, repatriable };
}
