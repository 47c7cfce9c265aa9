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

/** The host API every gpuhash dictionary table shares, as far as the playground uses it. */
interface DictionaryTable {
  readonly capacity: number;
  readonly size: number;
  readonly loadFactor: number;
  insert(keys: Uint32Array, values: Uint32Array): Promise<{ failed: Uint32Array }>;
  find(keys: Uint32Array): Promise<{ values: Uint32Array; found: Uint8Array }>;
  erase(keys: Uint32Array): Promise<number>;
  apply(batch: { ops: Uint8Array; keys: Uint32Array; values: Uint32Array }): Promise<{ values: Uint32Array; status: Uint8Array }>;
  destroy(): void;
}

/** Wraps a dictionary table, mapping the playground's op codes to the table's. */
function adapt(table: DictionaryTable, op: { insert: number; find: number; erase: number }): PlaygroundTable {
  const toOp = (code: number): number => (code === MixedOp.insert ? op.insert : code === MixedOp.find ? op.find : op.erase);
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
      const r = await table.apply({ ops: ops.map(toOp), keys, values });
      return { values: r.values, status: r.status };
    },
    destroy: () => table.destroy(),
  };
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
      return adapt(await LinearProbeTable.create(gpu, { capacity, maxLoadFactor: 0.95 }), Op);
    },
  },
  { id: 'slab', name: 'slab', summary: 'SlabHash: chains of 128-byte slabs, read by a whole subgroup', status: 'coming', maxLoad: 0.9 },
  {
    id: 'hive',
    name: 'hive',
    summary: 'Hive: cuckoo buckets, subgroup claims, stash, resizes without a global rehash',
    guide: '/guides/hive',
    status: 'ready',
    maxLoad: 0.95,
    async create(gpu, capacity) {
      const { HiveTable, Op } = await import('@gpuhash/hive');
      // Growth off: the playground asks for an exact capacity and a load factor to reach.
      return adapt(await HiveTable.create(gpu, { capacity, growth: false }), Op);
    },
  },
  { id: 'horton', name: 'horton', summary: 'Horton: bucketized cuckoo with remap entries', status: 'coming', maxLoad: 0.95 },
  { id: 'hkv', name: 'hkv', summary: 'HierarchicalKV: a cache that evicts by score when a bucket is full', status: 'coming', maxLoad: 1 },
];

export function tableById(id: string): TableChoice | undefined {
  return TABLES.find((t) => t.id === id);
}
