import { universalHash } from '@gpuhash/kernels';
import { BUSY_KEY, EMPTY_KEY, EMPTY_POINTER, type SlabTableBase, TOMBSTONE_KEY } from '../src';

/** What a table's slabs hold, read back and walked on the CPU. */
export interface Layout {
  /** Every live (key, value) entry, chain by chain, in chain order. */
  entries: Array<[number, number]>;
  /** Live entries per key. */
  copies: Map<number, number>;
  tombstones: number;
  /** Pool slabs in chains. */
  chainSlabs: number;
}

/**
 * Reads the slab array and the bitmaps and checks SlabHash's invariants (throws naming the first
 * broken one): every chain ends (no cycle), every pool slab is in at most one chain and is marked
 * allocated, every slab not in a chain is all EMPTY (so the allocator can hand it out), no BUSY
 * slot outlives a batch, every key lies in the chain of its bucket (the CPU twin of the universal
 * hash), in unique modes every key at most once, and EMPTY slots only in a chain's last slab.
 */
export async function readLayout(table: SlabTableBase, what: string): Promise<Layout> {
  const gpu = table.gpu;
  const buckets = table.buckets;
  const g = table.poolGeometry;
  const total = buckets + g.units;
  const words = new Uint32Array(await gpu.readBytes(table.slabsBuffer, 0, total * 128));
  const bitmapWords = g.superBlocks * g.blocksPerSuper * g.blockWords;
  const bitmap = new Uint32Array(await gpu.readBytes(table.bitmapBuffer, 0, bitmapWords * 4));
  const { a, b } = table.hashParams;
  const set = table.mode === 'set';
  const unique = table.mode !== 'multimap';
  const keyWords = set ? Array.from({ length: 31 }, (_, w) => w) : Array.from({ length: 15 }, (_, e) => 2 * e);
  const inChain = new Uint8Array(total);
  const layout: Layout = { entries: [], copies: new Map(), tombstones: 0, chainSlabs: 0 };
  const fail = (m: string) => {
    throw new Error(`${what}: ${m}`);
  };
  for (let bucket = 0; bucket < buckets; bucket++) {
    let s = bucket;
    for (let hops = 0; ; hops++) {
      if (hops > total) fail(`bucket ${bucket}'s chain does not end`);
      if (inChain[s]) fail(`slab ${s} is in two chains, or twice in one (bucket ${bucket})`);
      inChain[s] = 1;
      const next = words[s * 32 + 31] as number;
      if (s >= buckets) {
        layout.chainSlabs++;
        const u = s - buckets;
        if (!(((bitmap[u >>> 5] as number) >>> (u & 31)) & 1)) fail(`pool slab ${s} is in bucket ${bucket}'s chain but free in the bitmap`);
      }
      for (const w of keyWords) {
        const k = words[s * 32 + w] as number;
        if (k === BUSY_KEY) fail(`slab ${s} word ${w} is still BUSY`);
        if (k === TOMBSTONE_KEY) {
          layout.tombstones++;
          continue;
        }
        if (k === EMPTY_KEY) {
          if (unique && next !== EMPTY_POINTER) fail(`an EMPTY slot in slab ${s}, which is not its chain's last (bucket ${bucket})`);
          continue;
        }
        const home = universalHash(k, a, b, buckets);
        if (home !== bucket) fail(`key 0x${k.toString(16)} is in bucket ${bucket}'s chain; it hashes to ${home}`);
        layout.entries.push([k, set ? 0 : (words[s * 32 + w + 1] as number)]);
        layout.copies.set(k, (layout.copies.get(k) ?? 0) + 1);
        if (unique && (layout.copies.get(k) as number) > 1) fail(`key 0x${k.toString(16)} is stored twice`);
      }
      if (next === EMPTY_POINTER) break;
      if (next < buckets || next >= total) fail(`slab ${s} links to ${next}, outside the pool`);
      s = next;
    }
  }
  for (let s = buckets; s < total; s++) {
    if (inChain[s]) continue;
    const u = s - buckets;
    if (((bitmap[u >>> 5] as number) >>> (u & 31)) & 1) fail(`pool slab ${s} is allocated but in no chain`);
    for (let w = 0; w < 32; w++)
      if (words[s * 32 + w] !== EMPTY_KEY) fail(`free slab ${s} holds 0x${(words[s * 32 + w] as number).toString(16)} at word ${w}`);
  }
  return layout;
}
