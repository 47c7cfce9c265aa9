import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as core from '@gpuhash/core';
import { describe, expect, test } from 'vitest';
import { cachePackages, ROOT, tablePackages, workspacePackages } from '../../workspace/packages.mjs';
import { requiredValues } from '../src/required-exports.mjs';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const publishable = workspacePackages().filter((p) => !readJson(join(ROOT, p.dir, 'package.json')).private);

describe('publishable packages', () => {
  const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
  test('the repository has an MIT LICENSE', () => {
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the gpuhash authors\n/);
  });
  test.each(publishable.map((p) => [p.name, p.dir]))('%s ships the LICENSE and declares MIT', (_, dir) => {
    const pkg = readJson(join(ROOT, dir, 'package.json'));
    expect(pkg.license).toBe('MIT');
    expect(pkg.files).toContain('LICENSE');
    expect(readFileSync(join(ROOT, dir, 'LICENSE'), 'utf8')).toBe(license);
  });
  test.each(tablePackages().map((p) => [p.name, p.entry]))('%s re-exports what a user needs from core', async (_, entry) => {
    const table = await import(join(ROOT, entry));
    for (const name of requiredValues(core)) expect([name, table[name]]).toEqual([name, (core as Record<string, unknown>)[name]]);
  });
  // A cache (HKV) is not a Dictionary: it re-exports the GPU, device arrays and the errors, not the op codes.
  test.each(cachePackages().map((p) => [p.name, p.entry]))('%s re-exports what a user needs from core', async (_, entry) => {
    const cache = await import(join(ROOT, entry));
    for (const name of requiredValues(core).filter((n) => n !== 'Op')) {
      expect([name, cache[name]]).toEqual([name, (core as Record<string, unknown>)[name]]);
    }
  });
});

test('release pipeline: changesets, Verdaccio, npm and pnpm installs, tsc, Node, esbuild, Vite, webpack, Chromium', () => {
  const script = fileURLToPath(new URL('../src/release-check.mjs', import.meta.url));
  const run = spawnSync(process.execPath, [script], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const output = `${run.stdout}${run.stderr}`;
  console.log(output);
  expect(output).toContain('release check: PASS');
  expect(run.status).toBe(0);
});
