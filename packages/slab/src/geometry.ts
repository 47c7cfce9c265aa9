/**
 * The slab geometry of SlabHash (Ashkiani et al., IPDPS 2018, §III-A): a slab is 128 bytes, 32
 * words read by one cooperative group; the last word is the next-slab index. Map and multimap
 * slabs hold 15 key-value pairs (key in an even word, its value in the next), word 30 is the
 * paper's auxiliary word (unused); set slabs hold 31 keys.
 */

/** What a table stores: unique keys with values, duplicate keys with values, or unique keys alone. */
export type SlabMode = 'map' | 'multimap' | 'set';

export const SLAB_WORDS = 32;
export const SLAB_BYTES = SLAB_WORDS * 4;
/** Entries (pairs, or keys) per slab in each mode: the paper's M. */
export function entriesPerSlab(mode: SlabMode): number {
  return mode === 'set' ? 31 : 15;
}

/** Units (slabs) per memory block: 32 per bitmap word, `blockWords` bitmap words (the paper: 32, so 1024 units). */
export function unitsPerBlock(blockWords: number): number {
  return 32 * blockWords;
}

/** The paper's β: average slabs per bucket if every chain were packed, n / (M·B). */
export function bucketsFor(expectedKeys: number, mode: SlabMode, targetChainLength: number): number {
  return Math.max(1, Math.ceil(expectedKeys / (entriesPerSlab(mode) * targetChainLength)));
}

/**
 * Expected slabs beyond the base slabs that `keys` keys hashed uniformly into `buckets` buckets
 * need: buckets · E[max(0, ceil(X / M) - 1)] with X ~ Poisson(keys / buckets). Sizes the pool.
 */
export function expectedPoolSlabs(keys: number, buckets: number, perSlab: number): number {
  if (keys <= 0) return 0;
  const lambda = keys / buckets;
  if (lambda > 400) return buckets * Math.max(0, lambda / perSlab - 0.5);
  // Sum the Poisson tail term by term (in log space for large lambda).
  let expected = 0;
  let logP = -lambda;
  const top = Math.ceil(lambda + 12 * Math.sqrt(lambda) + 30);
  for (let x = 0; x <= top; x++) {
    if (x > 0) logP += Math.log(lambda / x);
    const extra = Math.max(0, Math.ceil(x / perSlab) - 1);
    if (extra > 0) expected += extra * Math.exp(logP);
  }
  return buckets * expected;
}
