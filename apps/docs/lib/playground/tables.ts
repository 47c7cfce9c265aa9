import type { Gpu } from '@gpuhash/core';

/**
 * What the playground needs from a table. Every dictionary table in gpuhash has this shape, so a
 * new table plugs in by adding one entry to TABLES with a `create` that wraps it.
 */
export interface PlaygroundTable {
  readonly capacity: number;
  readonly size: number;
  readonly loadFactor: number;
  insert(keys: Uint32Array, values: Uint32Array): Promise<{ failed: number }>;
  find(keys: Uint32Array): Promise<{ values: Uint32Array; found: Uint8Array }>;
  erase(keys: Uint32Array): Promise<number>;
  /** Mixed batch in one dispatch, where the design is concurrent; otherwise the runner splits it. */
  apply?(ops: Uint8Array, keys: Uint32Array, values: Uint32Array): Promise<{ values: Uint32Array; status: Uint8Array }>;
  destroy(): void;
}

/** Op codes of a mixed batch, as the playground encodes them. */
export const MixedOp = { insert: 0, find: 2, erase: 3 } as const;

export interface TableChoice {
  id: string;
  name: string;
  /** One line: what the design is. */
  summary: string;
  guide?: string;
  status: 'ready' | 'coming';
  /** Load factor the playground lets this table reach. */
  maxLoad: number;
  create?: (gpu: Gpu, capacity: number) => Promise<PlaygroundTable>;
}

export const TABLES: readonly TableChoice[] = [
  {
    id: 'linear-probe',
    name: 'linear-probe',
    summary: 'open addressing, linear probing, one CAS per insert',
    guide: '/guides/linear-probe',
    status: 'ready',
    maxLoad: 0.95,
    async create(gpu, capacity) {
      // Loaded on demand: the table's code stays out of pages that never run it.
      const { LinearProbeTable, Op } = await import('@gpuhash/linear-probe');
      // maxLoadFactor 0.95: the playground lets you walk linear probing into its slow zone.
      const table = await LinearProbeTable.create(gpu, { capacity, maxLoadFactor: 0.95 });
      const toOp = (op: number): number => (op === MixedOp.insert ? Op.insert : op === MixedOp.find ? Op.find : Op.erase);
      return {
        get capacity() {
          return table.capacity;
        },
        get size() {
          return table.size;
        },
        get loadFactor() {
          return table.loadFactor;
        },
        insert: async (keys, values) => ({ failed: (await table.insert(keys, values)).failed.length }),
        find: (keys) => table.find(keys),
        erase: (keys) => table.erase(keys),
        async apply(ops, keys, values) {
          const mapped = ops.map(toOp);
          const r = await table.apply({ ops: mapped, keys, values });
          return { values: r.values, status: r.status };
        },
        destroy: () => table.destroy(),
      };
    },
  },
  { id: 'slab', name: 'slab', summary: 'SlabHash: chains of 128-byte slabs, read by a whole subgroup', status: 'coming', maxLoad: 0.9 },
  {
    id: 'hive',
    name: 'hive',
    summary: 'Hive: cuckoo buckets, subgroup claims, stash, resizes without a global rehash',
    status: 'coming',
    maxLoad: 0.95,
  },
  { id: 'horton', name: 'horton', summary: 'Horton: bucketized cuckoo with remap entries', status: 'coming', maxLoad: 0.95 },
  { id: 'hkv', name: 'hkv', summary: 'HierarchicalKV: a cache that evicts by score when a bucket is full', status: 'coming', maxLoad: 1 },
];

export function tableById(id: string): TableChoice | undefined {
  return TABLES.find((t) => t.id === id);
}
