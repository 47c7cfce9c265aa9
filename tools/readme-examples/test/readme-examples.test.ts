// Every package README carries a complete example marked `<!-- example -->` (the fenced ```ts block
// right after the marker). This test runs each one as written, against the workspace sources
// (vitest.shared.ts aliases @gpuhash/* to them), on the test GPU: SwiftShader without a GPU. An
// example that throws, or whose own checks (node:assert) fail, fails its test.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../workspace/packages.mjs';

const MARKER = /<!--\s*example\s*-->\s*\n```ts\n([\s\S]*?)\n```/g;
const IMPORT = /import\s*\{([^}]*)\}\s*from\s*'(@gpuhash\/[\w-]+)';?/g;

interface Example {
  readme: string;
  line: number;
  code: string;
}

/** The marked examples of one markdown text, with the line each starts on. */
function extractExamples(readme: string, text: string): Example[] {
  return [...text.matchAll(MARKER)].map((m) => ({
    readme,
    line: text.slice(0, m.index + m[0].indexOf('```ts')).split('\n').length,
    code: m[1] ?? '',
  }));
}

/** The runtime names an example imports from each @gpuhash package (`type` imports are erased). */
function gpuhashImports(code: string): { specifier: string; names: string[]; statement: string }[] {
  return [...code.matchAll(IMPORT)].map((m) => ({
    statement: m[0],
    specifier: m[2] ?? '',
    names: (m[1] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '' && !s.startsWith('type ')),
  }));
}

const readmes = readdirSync(join(ROOT, 'packages'))
  .map((dir) => `packages/${dir}/README.md`)
  .filter((path) => existsSync(join(ROOT, path)));

const scratch = mkdtempSync(join(tmpdir(), 'gpuhash-readme-examples-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Checks that every name an example imports is exported by the package it names (the table
 * packages re-export core's `requestGpu`, errors and `Op`, so a user installs one package).
 */
async function checkImports(example: Example): Promise<string> {
  for (const { specifier, names } of gpuhashImports(example.code)) {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(/* @vite-ignore */ specifier)) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`${example.readme}:${example.line}: the example imports '${specifier}', which does not resolve: ${String(error)}`);
    }
    const missing = names.filter((name) => !(name.split(/\s+as\s+/)[0]! in mod));
    if (missing.length > 0) {
      throw new Error(
        `${example.readme}:${example.line}: the example imports ${missing.map((n) => `\`${n}\``).join(', ')} from '${specifier}', ` +
          'which exports no such name: fix the example or the package exports',
      );
    }
  }
  return example.code;
}

describe('README examples', () => {
  it('finds a marked example in every package README', () => {
    const without = readmes.filter((path) => extractExamples(path, readFileSync(join(ROOT, path), 'utf8')).length === 0);
    expect(without, `READMEs without a \`<!-- example -->\` block: ${without.join(', ')}`).toEqual([]);
  });

  const examples = readmes.flatMap((path) => extractExamples(path, readFileSync(join(ROOT, path), 'utf8')));
  for (const [i, example] of examples.entries()) {
    it(`runs ${example.readme}:${example.line}`, async () => {
      const code = await checkImports(example);
      const file = join(scratch, `example-${i}.ts`);
      writeFileSync(file, `// ${example.readme}:${example.line}\n${code}\n`);
      try {
        await import(/* @vite-ignore */ file);
      } catch (error) {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        throw new Error(`${example.readme}:${example.line}: the example failed: ${message}`, { cause: error });
      }
    });
  }
});

describe('the extraction', () => {
  it('takes only ```ts blocks right after the marker, and the runtime names of each import', () => {
    const text = [
      '# x',
      '```ts',
      'skipped();',
      '```',
      '<!-- example -->',
      '```ts',
      "import { type A, B, C as D } from '@gpuhash/core';",
      'run();',
      '```',
    ].join('\n');
    const found = extractExamples('x.md', text);
    expect(found).toEqual([{ readme: 'x.md', line: 6, code: "import { type A, B, C as D } from '@gpuhash/core';\nrun();" }]);
    expect(gpuhashImports(found[0]!.code).map((i) => [i.specifier, i.names])).toEqual([['@gpuhash/core', ['B', 'C as D']]]);
  });
});
