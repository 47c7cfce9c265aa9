// Every registration derived from the package list is complete: a package added under packages/
// shows up in the aliases, tsconfig paths, gpu-check, the bench, the playground and the docs, or
// this test says what to run.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TABLES as BENCH_TABLES } from '../../../apps/bench/src/tables/index.ts';
import { TABLES as PLAYGROUND_TABLES } from '../../../apps/docs/lib/playground/tables.ts';
import { workspaceAliases } from '../../../workspace-aliases.mjs';
import { suiteLoaders } from '../../gpu-check/src/suites.ts';
import {
  cachePackages,
  generatedFiles,
  guides,
  missingDependencies,
  ROOT,
  sourceEntries,
  tablePackages,
  workspacePackages,
} from '../packages.mjs';

const packages = workspacePackages();
const tables = tablePackages();
const FIX = 'run `pnpm sync:packages` (it writes them and runs pnpm install)';

describe('the package list', () => {
  it('finds every package under packages/, each with a valid gpuhash field', () => {
    const folders = readdirSync(join(ROOT, 'packages')).filter((d) => existsSync(join(ROOT, 'packages', d, 'package.json')));
    expect(packages.map((p) => p.id).sort()).toEqual(folders.sort());
    expect(packages.map((p) => p.id)).toEqual(expect.arrayContaining(['core', 'kernels', 'linear-probe', 'hive']));
  });

  it('has the generated modules up to date', () => {
    const stale = Object.entries(generatedFiles())
      .filter(([path, content]) => !existsSync(join(ROOT, path)) || readFileSync(join(ROOT, path), 'utf8') !== content)
      .map(([path]) => path);
    expect(stale, `stale generated modules: ${stale.join(', ')}; ${FIX}`).toEqual([]);
  });

  it('has every workspace package in the dependencies of the bench, the docs and gpu-check', () => {
    const missing = missingDependencies();
    expect(missing, `${missing.join('\n')}\n${FIX}`).toEqual([]);
  });
});

describe('every package is registered', () => {
  it('in the source aliases (vitest, esbuild, Vite)', () => {
    const aliases = workspaceAliases();
    for (const p of packages) {
      expect(aliases[p.name], p.name).toBe(join(ROOT, p.entry));
      expect(existsSync(aliases[p.name] as string), `${p.entry} exists`).toBe(true);
    }
    expect(Object.keys(aliases)).toEqual(Object.keys(sourceEntries()));
  });

  it('in the tsconfig paths', () => {
    const paths = JSON.parse(readFileSync(join(ROOT, 'tsconfig.base.json'), 'utf8')).compilerOptions.paths as Record<string, string[]>;
    for (const p of packages) expect(resolvePath(paths, p.name), p.name).toBe(`./${p.entry}`);
    expect(resolvePath(paths, '@gpuhash/testing')).toBe('./tools/testing/src/index.ts');
    expect(resolvePath(paths, '@gpuhash/testing/vitest')).toBe('./tools/testing/src/vitest.ts');
  });

  it('in gpu-check, with each of its check suites', () => {
    expect(Object.keys(suiteLoaders)).toEqual(packages.filter((p) => p.checks.length > 0).map((p) => p.id));
    const generated = readFileSync(join(ROOT, 'tools/gpu-check/src/suites.generated.ts'), 'utf8');
    for (const file of packages.flatMap((p) => p.checks)) expect(generated).toContain(`'../../../${file.replace(/\.ts$/, '')}'`);
  });

  it('in the bench (tables)', () => {
    const names = BENCH_TABLES.map((t) => t.name);
    for (const p of tables) expect(names, `the bench has a table named ${p.id}`).toContain(p.id);
    // In package order, a package's variants after it ('linear-probe', 'linear-probe-atomic').
    const owner = (name: string) => tables.findIndex((p) => name === p.id || name.startsWith(`${p.id}-`));
    const owners = names.map(owner);
    expect(owners.every((o) => o >= 0)).toBe(true);
    expect(owners).toEqual([...owners].sort((a, b) => a - b));
    for (const t of BENCH_TABLES) expect(t.reservedKeys.length, `${t.name} reserves its sentinels`).toBeGreaterThan(0);
  });

  it('in the playground (tables), in package order, replacing its "coming" entry', () => {
    for (const p of tables) {
      const choice = PLAYGROUND_TABLES.find((t) => t.id === p.id);
      expect(choice?.status, p.id).toBe('ready');
      expect(choice?.create, p.id).toBeTypeOf('function');
      expect(choice?.summary).toBe(p.gpuhash.summary);
      expect(choice?.maxLoad).toBe(p.gpuhash.maxLoad);
    }
    expect(PLAYGROUND_TABLES.filter((t) => t.status === 'ready').map((t) => t.id)).toEqual(tables.map((p) => p.id));
    // A design still 'coming' has no package yet.
    for (const t of PLAYGROUND_TABLES.filter((t) => t.status === 'coming')) expect(tables.map((p) => p.id)).not.toContain(t.id);
  });

  it('caches (their own API, not a Dictionary) stay out of the dictionary bench and the playground', () => {
    for (const p of cachePackages()) {
      expect(
        BENCH_TABLES.some((t) => t.name === p.id || t.name.startsWith(`${p.id}-`)),
        `${p.id} in the dictionary bench`,
      ).toBe(false);
      expect(
        PLAYGROUND_TABLES.some((t) => t.id === p.id),
        `${p.id} in the playground's dictionary tables`,
      ).toBe(false);
      expect(p.checks.length, `${p.id} has check suites for gpu-check`).toBeGreaterThan(0);
    }
  });

  it('in the docs: the API reference and the guides', async () => {
    const { API_PACKAGES } = await import('../../../apps/docs/scripts/api.mjs');
    expect(API_PACKAGES).toEqual(packages.map((p) => p.id));
    const config = (await import('../../../apps/docs/.vitepress/config.ts')).default;
    const sidebar = config.themeConfig?.sidebar as Array<{ text: string; items?: Array<{ text: string; link: string }> }>;
    const links = sidebar.find((s) => s.text === 'Guides')?.items?.map((i) => i.link);
    for (const p of packages.filter((p) => p.gpuhash.guide)) {
      expect(links, `${p.id}'s guide is in the sidebar`).toContain(p.gpuhash.guide);
      expect(existsSync(join(ROOT, 'apps/docs/src', `${p.gpuhash.guide}.md`)), `apps/docs/src${p.gpuhash.guide}.md exists`).toBe(true);
    }
    expect(links).toEqual(guides().map((g) => g.link));
  });
});

describe('a new table package', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpuhash-workspace-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, content: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  };
  mkdirSync(join(root, 'apps/bench/src/tables'), { recursive: true });
  write(
    'packages/core/package.json',
    JSON.stringify({ name: '@gpuhash/core', gpuhash: { kind: 'toolkit', order: 1, summary: 'the GPU runtime', guide: '/guides/core' } }),
  );
  const slab = { kind: 'table', order: 20, summary: 'SlabHash', guide: '/guides/slab', export: 'SlabTable', maxLoad: 0.9 };
  write('packages/slab/package.json', JSON.stringify({ name: '@gpuhash/slab', gpuhash: slab }));
  write('packages/slab/test/table.checks.ts', '');
  write('packages/slab/test/table.test.ts', '');

  it('is found from its folder alone, and lands in every derived list', () => {
    expect(workspacePackages(root).map((p) => [p.id, p.checks])).toEqual([
      ['core', []],
      ['slab', ['packages/slab/test/table.checks.ts']],
    ]);
    expect(sourceEntries(root)['@gpuhash/slab']).toBe('packages/slab/src/index.ts');
    expect(guides(root)).toEqual([
      { text: 'slab', link: '/guides/slab' },
      { text: 'core: the GPU runtime', link: '/guides/core' },
    ]);
    const files = generatedFiles(root);
    expect(files['tools/gpu-check/src/suites.generated.ts']).toContain("import('../../../packages/slab/test/table.checks')");
    expect(files['apps/bench/src/tables/packages.generated.ts']).toContain("import * as slab from '@gpuhash/slab';");
    expect(files['apps/bench/src/tables/packages.generated.ts']).toContain('table: slab.SlabTable,');
    expect(files['apps/bench/src/tables/packages.generated.ts']).not.toContain('tables: slabTables');
  });

  it('with a bench file of its own is benched as that file says', () => {
    write('apps/bench/src/tables/slab.ts', '');
    expect(generatedFiles(root)['apps/bench/src/tables/packages.generated.ts']).toContain('tables: slabTables,');
    rmSync(join(root, 'apps/bench/src/tables/slab.ts'));
  });

  it('is refused with what to write when its gpuhash field is missing or wrong', () => {
    write('packages/horton/package.json', JSON.stringify({ name: '@gpuhash/horton' }));
    expect(() => workspacePackages(root)).toThrow(/packages\/horton\/package.json: needs a "gpuhash" field/);
    write('packages/horton/package.json', JSON.stringify({ name: '@gpuhash/cuckoo', gpuhash: { kind: 'table', order: 40, summary: 'x' } }));
    expect(() => workspacePackages(root)).toThrow(/"name" must be "@gpuhash\/horton".*gpuhash.export must name.*gpuhash.maxLoad/);
    rmSync(join(root, 'packages/horton'), { recursive: true });
  });
});

/** What TypeScript's `paths` maps a module name to: an exact entry, else the longest matching `prefix*`. */
function resolvePath(paths: Record<string, string[]>, name: string): string | undefined {
  if (paths[name]) return paths[name][0];
  const wild = Object.keys(paths)
    .filter((k) => k.endsWith('*') && name.startsWith(k.slice(0, -1)))
    .sort((a, b) => b.length - a.length)[0];
  return wild ? paths[wild]?.[0]?.replace('*', name.slice(wild.length - 1)) : undefined;
}
