// The workspace's package list, read from packages/*/package.json (and tools/testing): the one
// place a table is registered. Everything that used to list the packages by hand derives from
// here: the source aliases (vitest, esbuild, Vite), the gpu-check suites, the bench registry, the
// docs (API reference, guides, playground) and the apps' dependencies. See README.md.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, with a trailing slash. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const SCOPE = '@gpuhash/';
const KINDS = new Set(['table', 'cache', 'toolkit']);

/** Test helpers, resolved to their sources like the packages (more specific entry first). */
const TESTING_ENTRIES = {
  '@gpuhash/testing/vitest': 'tools/testing/src/vitest.ts',
  '@gpuhash/testing': 'tools/testing/src/index.ts',
};

/**
 * The apps and tools that use every package under packages/ (the bench, the docs and gpu-check),
 * with any extra workspace dependencies. pnpm needs each one listed in their package.json:
 * `pnpm sync:packages` writes them, the registry test fails while one is missing.
 */
export const CONSUMERS = {
  'apps/bench': { field: 'dependencies', extra: [] },
  'apps/docs': { field: 'dependencies', extra: [] },
  'tools/gpu-check': { field: 'dependencies', extra: ['@gpuhash/testing'] },
};

/**
 * @typedef {object} GpuhashMeta The `gpuhash` field of a package's package.json.
 * @property {'table' | 'cache' | 'toolkit'} kind 'table': a core `Dictionary` (bench, playground); 'cache': its own API (HKV), benched by its own suite
 * @property {number} order Position in every list (API reference, guides, bench, playground, checks).
 * @property {string} summary One line: what the package is (the playground's table list; a toolkit's guide title).
 * @property {string} [guide] The docs page of its guide ('/guides/hive').
 * @property {string} [paper] The paper the design comes from.
 * @property {string} [export] Tables and caches: the exported class with `static create(gpu, options)`.
 * @property {number} [maxLoad] Tables: the highest load factor the bench and the playground reach.
 * @property {Record<string, unknown>} [playground] Tables: options the playground creates it with (default `{ growth: false }`).
 */

/**
 * @typedef {object} WorkspacePackage
 * @property {string} id The folder name under packages/, and the name after `@gpuhash/`.
 * @property {string} name '@gpuhash/hive'
 * @property {string} dir 'packages/hive' (relative to the root)
 * @property {string} entry 'packages/hive/src/index.ts' (relative to the root)
 * @property {GpuhashMeta} gpuhash
 * @property {string[]} checks The GPU check suites, 'packages/hive/test/table.checks.ts'..., sorted.
 */

/** @returns {WorkspacePackage[]} every package under packages/, in `gpuhash.order` */
export function workspacePackages(root = ROOT) {
  const found = [];
  for (const id of readdirSync(join(root, 'packages')).sort()) {
    const dir = `packages/${id}`;
    const file = join(root, dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    const problems = validate(id, pkg);
    if (problems.length > 0) throw new Error(`${dir}/package.json: ${problems.join('; ')}`);
    const testDir = join(root, dir, 'test');
    const checks = existsSync(testDir)
      ? readdirSync(testDir)
          .filter((f) => f.endsWith('.checks.ts'))
          .sort()
          .map((f) => `${dir}/test/${f}`)
      : [];
    found.push({ id, name: pkg.name, dir, entry: `${dir}/src/index.ts`, gpuhash: pkg.gpuhash, checks });
  }
  return found.sort((a, b) => a.gpuhash.order - b.gpuhash.order || a.id.localeCompare(b.id));
}

/** @returns {WorkspacePackage[]} the hash tables, in order */
export function tablePackages(root = ROOT) {
  return workspacePackages(root).filter((p) => p.gpuhash.kind === 'table');
}

function validate(id, pkg) {
  const problems = [];
  const meta = pkg.gpuhash;
  if (pkg.name !== `${SCOPE}${id}`) problems.push(`"name" must be "${SCOPE}${id}" (the folder's name), got ${JSON.stringify(pkg.name)}`);
  if (typeof meta !== 'object' || meta === null) {
    problems.push(
      'needs a "gpuhash" field: { "kind": "table" | "cache" | "toolkit", "order": N, "summary": "..." } (see tools/workspace/README.md)',
    );
    return problems;
  }
  if (!KINDS.has(meta.kind)) problems.push(`gpuhash.kind must be "table", "cache" or "toolkit", got ${JSON.stringify(meta.kind)}`);
  if (typeof meta.order !== 'number') problems.push('gpuhash.order must be a number (its place in the lists)');
  if (typeof meta.summary !== 'string' || meta.summary === '') problems.push('gpuhash.summary must be one line of text');
  if (meta.guide !== undefined && !/^\/guides\/[\w-]+$/.test(meta.guide)) problems.push('gpuhash.guide must look like "/guides/NAME"');
  if (meta.kind === 'cache' && (typeof meta.export !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(meta.export))) {
    problems.push('gpuhash.export must name the cache class the package exports ("HkvCache")');
  }
  if (meta.kind === 'table') {
    if (typeof meta.export !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(meta.export)) {
      problems.push('gpuhash.export must name the table class the package exports ("HiveTable")');
    }
    if (typeof meta.maxLoad !== 'number' || !(meta.maxLoad > 0 && meta.maxLoad <= 1)) problems.push('gpuhash.maxLoad must be in (0, 1]');
  }
  return problems;
}

/** @returns {Record<string, string>} package name -> source entry, relative to the root (testing first) */
export function sourceEntries(root = ROOT) {
  return { ...TESTING_ENTRIES, ...Object.fromEntries(workspacePackages(root).map((p) => [p.name, p.entry])) };
}

/** @returns {string[]} the packages the API reference covers (folder names), in order */
export function apiPackages(root = ROOT) {
  return workspacePackages(root).map((p) => p.id);
}

/** @returns {WorkspacePackage[]} the caches (their own API, not a `Dictionary`), in order */
export function cachePackages(root = ROOT) {
  return workspacePackages(root).filter((p) => p.gpuhash.kind === 'cache');
}

/** @returns {{ text: string, link: string }[]} the guides: tables and caches first, then the toolkit, each in order */
export function guides(root = ROOT) {
  const all = workspacePackages(root).filter((p) => p.gpuhash.guide);
  return [
    ...all.filter((p) => p.gpuhash.kind === 'table' || p.gpuhash.kind === 'cache').map((p) => ({ text: p.id, link: p.gpuhash.guide })),
    ...all.filter((p) => p.gpuhash.kind === 'toolkit').map((p) => ({ text: `${p.id}: ${p.gpuhash.summary}`, link: p.gpuhash.guide })),
  ];
}

/** @returns {Record<string, Record<string, string>>} consumer dir -> the workspace dependencies it must list */
export function expectedDependencies(root = ROOT) {
  const names = workspacePackages(root).map((p) => p.name);
  return Object.fromEntries(
    Object.entries(CONSUMERS).map(([dir, { extra }]) => [dir, Object.fromEntries([...names, ...extra].map((n) => [n, 'workspace:*']))]),
  );
}

/** @returns {string[]} what is missing from the consumers' package.json, one line each (empty when complete) */
export function missingDependencies(root = ROOT) {
  const missing = [];
  for (const [dir, deps] of Object.entries(expectedDependencies(root))) {
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    const listed = { ...pkg.dependencies, ...pkg.devDependencies };
    for (const name of Object.keys(deps)) {
      if (!listed[name]) missing.push(`${dir}/package.json lacks "${name}": "workspace:*" in "${CONSUMERS[dir].field}"`);
    }
  }
  return missing;
}

const HEADER = '// Generated by `pnpm sync:packages` from packages/*/package.json (tools/workspace/packages.mjs): do not edit.\n';

/**
 * The generated modules, for the bundles esbuild builds (it has no import.meta.glob): path
 * relative to the root -> content. `pnpm sync:packages` writes them; the registry test checks them.
 * @returns {Record<string, string>}
 */
export function generatedFiles(root = ROOT) {
  const packages = workspacePackages(root);
  return {
    'tools/gpu-check/src/suites.generated.ts': gpuCheckSuites(packages),
    'apps/bench/src/tables/packages.generated.ts': benchTables(root, packages),
  };
}

function gpuCheckSuites(packages) {
  const lines = [HEADER, "/** Each package's check-suite modules (packages/NAME/test/*.checks.ts), loaded lazily. */"];
  lines.push('export const checkModules: Record<string, () => Promise<Record<string, unknown>[]>> = {');
  for (const p of packages.filter((p) => p.checks.length > 0)) {
    lines.push(`  '${p.id}': () =>`, '    Promise.all([');
    for (const file of p.checks) lines.push(`      import('../../../${file.replace(/\.ts$/, '')}'),`);
    lines.push('    ]),');
  }
  lines.push('};', '');
  return lines.join('\n');
}

function benchTables(root, packages) {
  const tables = packages.filter((p) => p.gpuhash.kind === 'table');
  const ident = (id) => id.replace(/-(\w)/g, (_, c) => c.toUpperCase());
  const overridden = (p) => existsSync(join(root, 'apps/bench/src/tables', `${p.id}.ts`));
  const lines = [HEADER];
  for (const p of tables) lines.push(`import * as ${ident(p.id)} from '${p.name}';`);
  for (const p of tables.filter(overridden)) lines.push(`import { tables as ${ident(p.id)}Tables } from './${p.id}';`);
  lines.push("import type { TablePackage } from './types';", '');
  lines.push(
    '/**',
    ' * Every table package, in order. A package with a file of its own here (src/tables/NAME.ts, exporting',
    ' * `tables`) is benched as that file says; any other through the generic dictionary entry.',
    ' */',
    'export const TABLE_PACKAGES: readonly TablePackage[] = [',
  );
  for (const p of tables) {
    const g = p.gpuhash;
    lines.push('  {');
    lines.push(`    id: '${p.id}',`, `    name: '${p.name}',`, `    summary: ${JSON.stringify(g.summary)},`, `    maxLoad: ${g.maxLoad},`);
    lines.push(`    module: ${ident(p.id)},`, `    table: ${ident(p.id)}.${g.export},`);
    if (overridden(p)) lines.push(`    tables: ${ident(p.id)}Tables,`);
    lines.push('  },');
  }
  lines.push('];', '');
  return lines.join('\n');
}
