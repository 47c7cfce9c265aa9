/** The `gpuhash` field of a package's package.json. */
export interface GpuhashMeta {
  /** 'table': a core `Dictionary`; 'cache': its own API (hkv), not a `Dictionary`; 'toolkit': core, kernels. */
  kind: 'table' | 'cache' | 'toolkit';
  /** Position in every list (API reference, guides, bench, playground, checks). */
  order: number;
  /** One line: what the package is. */
  summary: string;
  /** The docs page of its guide ('/guides/hive'). */
  guide?: string;
  /** The paper the design comes from. */
  paper?: string;
  /** Tables and caches: the exported class with `static create(gpu, options)`. */
  export?: string;
  /** Tables: the highest load factor the bench and the playground reach. */
  maxLoad?: number;
  /** Tables: options the playground creates it with (default `{ growth: false }`). */
  playground?: Record<string, unknown>;
}

export interface WorkspacePackage {
  /** The folder name under packages/, and the name after `@gpuhash/`. */
  id: string;
  name: string;
  dir: string;
  entry: string;
  gpuhash: GpuhashMeta;
  /** Its GPU check suites ('packages/hive/test/table.checks.ts'...), sorted. */
  checks: string[];
}

export declare const ROOT: string;
export declare const CONSUMERS: Record<string, { field: 'dependencies' | 'devDependencies'; extra: string[] }>;
export declare function workspacePackages(root?: string): WorkspacePackage[];
export declare function tablePackages(root?: string): WorkspacePackage[];
export declare function cachePackages(root?: string): WorkspacePackage[];
export declare function sourceEntries(root?: string): Record<string, string>;
export declare function apiPackages(root?: string): string[];
export declare function guides(root?: string): { text: string; link: string }[];
export declare function expectedDependencies(root?: string): Record<string, Record<string, string>>;
export declare function missingDependencies(root?: string): string[];
export declare function generatedFiles(root?: string): Record<string, string>;
