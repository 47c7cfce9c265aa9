/**
 * A sequential CPU model of where a Horton bulk build's secondary keys go (no GPU): primary keys
 * fill their buckets, an overfilled bucket keeps 7 and spills the rest, and each spilled key takes
 * its entry's bucket (set, on the entry's first key, to the candidate with the most room). It
 * counts the spilled keys left without a slot, by cause, for the choice of which keys a bucket
 * spills (apps/bench/results/horton-design-history.md, "Claim classes"):
 *   node horton-placement-model.mjs [log2 slots] [load] [order]
 * order: 'arrival' (the last keys to arrive spill), 'room' (keys whose tag's secondary buckets have
 * room left by the primary keys spill first), 'distinct' (keys of distinct tags spill first), or
 * 'both'. Keys fmix32(2j + 1), as apps/bench.
 */

import { ENTRIES, primaryBucket, secondaryBucket, tagOf } from '@gpuhash/horton';
import { fmix32 } from '@gpuhash/kernels';

const log2 = Number(process.argv[2] ?? 20);
const load = Number(process.argv[3] ?? 0.9);
const order = process.argv[4] ?? 'both';
const byRoom = order === 'room' || order === 'both';
const distinct = order === 'distinct' || order === 'both';
const buckets = 2 ** log2 / 8;
const mask = buckets - 1;
const n = Math.floor(load * 2 ** log2);
const keys = new Uint32Array(n);
for (let j = 0, i = 0; i < n; j++) {
  const k = fmix32(2 * j + 1) >>> 0;
  if (k < 0xfffffffd) keys[i++] = k;
}

// Primary keys per bucket; a bucket with more than 8 keeps 7 and the remap entry array.
const byBucket = new Map<number, number[]>();
for (const k of keys) {
  const x = primaryBucket(k, mask);
  const list = byBucket.get(x);
  if (list) list.push(k);
  else byBucket.set(x, [k]);
}
const used = new Uint8Array(buckets);
for (const [x, list] of byBucket) used[x] = Math.min(list.length, 8);
const roomAfterPrimaries = (w: number) => 8 - (used[w] as number);
const roomyCandidates = (x: number, t: number) => {
  let c = 0;
  for (let i = 1; i <= 7; i++) {
    const w = secondaryBucket(x, t, i, mask);
    if (w !== x && roomAfterPrimaries(w) > 0) c++;
  }
  return c === 0 ? 0 : c <= 2 ? 1 : 2;
};

// The spilled keys of each overfilled bucket: the last len - 7 of its claim order.
const spilled: number[] = [];
for (const [x, list] of byBucket) {
  if (list.length <= 8) continue;
  const seen = new Set<number>();
  const rank = list.map((k) => {
    const t = tagOf(k);
    const repeat = distinct && seen.has(t);
    seen.add(t);
    // Claim order: repeated tags first, then by room class; the bucket spills the last keys.
    return (repeat ? 0 : 1) * 4 + (byRoom ? roomyCandidates(x, t) : 0);
  });
  const claimOrder = list.map((k, i) => ({ k, r: rank[i] as number })).sort((a, b) => a.r - b.r);
  for (const { k } of claimOrder.slice(7)) spilled.push(k);
}

// Greedy placement in arrival order: an entry per (bucket, tag), set to the roomiest candidate.
const entry = new Map<number, number>();
let noRoom = 0;
let groupFull = 0;
for (const k of spilled) {
  const x = primaryBucket(k, mask);
  const t = tagOf(k);
  const id = x * ENTRIES + t;
  let e = entry.get(id);
  if (e === undefined) {
    let best = 0;
    let bestRoom = 0;
    for (let i = 1; i <= 7; i++) {
      const w = secondaryBucket(x, t, i, mask);
      if (w !== x && roomAfterPrimaries(w) > bestRoom) {
        bestRoom = roomAfterPrimaries(w);
        best = i;
      }
    }
    if (best === 0) {
      noRoom++;
      continue;
    }
    e = best;
    entry.set(id, e);
  }
  const y = secondaryBucket(x, t, e, mask);
  if ((used[y] as number) < 8) used[y] = (used[y] as number) + 1;
  else groupFull++;
}
const left = noRoom + groupFull;
console.log(
  `2^${log2} slots, load ${load}, order ${order}: ${spilled.length} spilled keys, ${left} left without a slot (${((100 * left) / spilled.length).toFixed(2)}%): ${noRoom} with no candidate room, ${groupFull} whose group's bucket was full`,
);
