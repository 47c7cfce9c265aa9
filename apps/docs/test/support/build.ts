import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { DOCS_DIR, SITE_DIR } from './paths';

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: DOCS_DIR, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`node ${args.join(' ')} failed (${code}):\n${output}`))));
  });
}

/**
 * Builds the site exactly as `pnpm build` does (API reference, then VitePress), so the tests see
 * what would be published. GPUHASH_DOCS_REUSE_BUILD=1 reuses an existing build, for quick reruns
 * while editing the tests themselves.
 */
export async function buildSite(): Promise<{ ms: number; reused: boolean }> {
  const start = Date.now();
  if (process.env.GPUHASH_DOCS_REUSE_BUILD === '1' && existsSync(`${SITE_DIR}/index.html`)) return { ms: 0, reused: true };
  await run(['scripts/api.mjs']);
  await run([`${DOCS_DIR}node_modules/vitepress/bin/vitepress.js`, 'build']);
  return { ms: Date.now() - start, reused: false };
}
