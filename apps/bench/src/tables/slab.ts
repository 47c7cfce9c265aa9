import { RESERVED_KEYS, SlabHashMap } from '@gpuhash/slab';
import { adaptDictionary } from './dictionary';
import type { TableEntry } from './types';

/**
 * SlabHash at the two bucket counts its own library was measured with (0.9 × 2^27 keys): 10 keys
 * per bucket at load 0.9 (slab utilization about 0.60, mostly one slab per chain) and 60 (about
 * 0.84, chains of four or five slabs). The bucket count follows the run's capacity, so a load
 * of 0.9 always gives those chain lengths; the pool is preallocated for the run's highest load.
 */
function entry(name: string, keysPerBucketAt09: number, description: string): TableEntry {
  return {
    name,
    description,
    capabilities: new Set(['insert', 'find', 'erase', 'mixed', 'host', 'alloc']),
    reservedKeys: RESERVED_KEYS,
    maxLoad: 0.95,
    async create(gpu, capacity) {
      const buckets = Math.max(1, Math.ceil((0.9 * capacity) / keysPerBucketAt09));
      // Keys up to load 0.95 plus a mixed batch's inserts; growth off, so the pool never moves under an encoder.
      const table = await SlabHashMap.create(gpu, { capacity: Math.ceil(0.99 * capacity), buckets, growth: false });
      const bench = adaptDictionary(name, table);
      // The allocator workload's own pool, the paper's size (2^23 slabs, 1 GiB) or a 64th of the
      // run's slots' bytes in a small run: one bucket, so the table's slabs are all pool.
      const poolSlabs = Math.min(1 << 23, Math.max(64, capacity >> 4));
      const owned = await SlabHashMap.create(gpu, { capacity: 1, buckets: 1, poolSlabs, growth: false });
      return {
        ...bench,
        allocatorSlabs: poolSlabs,
        encodeAllocate: (encoder, n, out, timestampWrites) => owned.encodeAllocate(encoder, n, out, timestampWrites),
        encodeFree: (encoder, list, n) => owned.encodeFree(encoder, list, n),
        destroy() {
          bench.destroy();
          owned.destroy();
        },
      };
    },
  };
}

export const slab = entry('slab', 10, 'SlabHash, 10 keys per bucket at load 0.9 (@gpuhash/slab)');
export const slabLong = entry('slab-long', 60, 'SlabHash, 60 keys per bucket at load 0.9: chains of 4-5 slabs (@gpuhash/slab)');

/** The bench's entries for @gpuhash/slab (read by packages.generated.ts). */
export const tables: readonly TableEntry[] = [slab, slabLong];
