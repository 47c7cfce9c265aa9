/// <reference types="vitepress/client" />
import type { Dictionary, DictionaryOptions, Gpu } from '@gpuhash/core';

/**
 * What the playground needs from a table: core's dictionary contract, host side. Mixed batches
 * carry core's `Op` codes, the same in every table.
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

export interface TableChoice {
  id: string;
  name: string;
  /** One line: what the design is. */
  summary: string;
  guide?: string;
  paper?: string;
  status: 'ready' | 'coming';
  /** Load factor the playground lets this table reach. */
  maxLoad: number;
  create?: (gpu: Gpu, capacity: number) => Promise<PlaygroundTable>;
}

/** The `gpuhash` field of a package's package.json (tools/workspace/packages.mjs describes it). */
interface PackageMeta {
  kind: 'table' | 'cache' | 'toolkit';
  order: number;
  summary: string;
  guide?: string;
  paper?: string;
  /** The table class the package exports. */
  export?: string;
  maxLoad?: number;
  /** Options the playground creates the table with, besides its capacity (default: no growth). */
  playground?: Partial<DictionaryOptions> & Record<string, unknown>;
}

/** Every package's `gpuhash` field, by path: a new package under packages/ shows up by itself. */
const MANIFESTS = import.meta.glob<PackageMeta | undefined>('../../../../packages/*/package.json', { eager: true, import: 'gpuhash' });
/** Every package's source, loaded on demand: a table's code stays out of pages that never run it. */
const SOURCES = import.meta.glob<Record<string, unknown>>('../../../../packages/*/src/index.ts');

/** Designs on the way, listed until their package lands (the package's own entry then replaces it). */
const COMING: ReadonlyArray<{ id: string; order: number; summary: string; maxLoad: number }> = [
  { id: 'slab', order: 20, summary: 'SlabHash: chains of 128-byte slabs, read by a whole subgroup', maxLoad: 0.9 },
  { id: 'horton', order: 40, summary: 'Horton: bucketized cuckoo with remap entries', maxLoad: 0.95 },
];

/** What the playground uses of a table: core's `Dictionary`, host side. */
type HostDictionary = Pick<
  Dictionary,
  'capacity' | 'capabilities' | 'size' | 'loadFactor' | 'insert' | 'find' | 'erase' | 'apply' | 'destroy'
>;

/** A table class as the package exports it (the `export` its package.json names). */
interface TableClass {
  create(gpu: Gpu, options: DictionaryOptions): Promise<HostDictionary>;
}

/** Wraps a dictionary table (core's contract) for the playground. */
function adapt(table: HostDictionary): PlaygroundTable {
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
    // Every DictionaryTable has the method; tables without the 'apply' capability refuse the call.
    apply:
      table.apply && table.capabilities.has('apply')
        ? async (ops, keys, values) => {
            const r = await table.apply!({ ops, keys, values });
            return { values: r.values, status: r.status };
          }
        : undefined,
    destroy: () => table.destroy(),
  };
}

function packageChoice(id: string, meta: PackageMeta): TableChoice {
  const source = SOURCES[`../../../../packages/${id}/src/index.ts`];
  const className = meta.export ?? '';
  return {
    id,
    name: id,
    summary: meta.summary,
    guide: meta.guide,
    paper: meta.paper,
    status: 'ready',
    maxLoad: meta.maxLoad ?? 0.95,
    async create(gpu, capacity) {
      if (!source) throw new Error(`@gpuhash/${id}: no src/index.ts`);
      const Table = (await source())[className] as TableClass | undefined;
      if (typeof Table?.create !== 'function') throw new Error(`@gpuhash/${id} exports no table class ${className} with create()`);
      // The package's playground options: e.g. growth off (an exact capacity and a load factor to
      // reach), or a higher maxLoadFactor (linear probing walked into its slow zone).
      return adapt(await Table.create(gpu, { capacity, ...(meta.playground ?? { growth: false }) }));
    },
  };
}

const packaged = Object.entries(MANIFESTS).flatMap(([path, meta]) =>
  meta?.kind === 'table' ? [{ order: meta.order, choice: packageChoice(path.split('/').at(-2) ?? '', meta) }] : [],
);
const coming = COMING.filter((c) => !packaged.some((p) => p.choice.id === c.id)).map((c) => ({
  order: c.order,
  choice: { id: c.id, name: c.id, summary: c.summary, status: 'coming', maxLoad: c.maxLoad } satisfies TableChoice,
}));

/** The tables of the workspace (packages/* with a `gpuhash` field of kind table) and those coming, in order. */
export const TABLES: readonly TableChoice[] = [...packaged, ...coming].sort((a, b) => a.order - b.order).map((t) => t.choice);

export function tableById(id: string): TableChoice | undefined {
  return TABLES.find((t) => t.id === id);
}
