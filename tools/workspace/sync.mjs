// `pnpm sync:packages`: after adding (or removing) a package folder under packages/, writes what
// derives from the package list but cannot be computed when it is used: the generated modules of
// the esbuild bundles (gpu-check's suites, the bench's tables) and the workspace dependencies of
// the bench, the docs and gpu-check; then runs `pnpm install` if a dependency changed.
// `--check` writes nothing and exits 1 when something is stale.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSUMERS, expectedDependencies, generatedFiles, ROOT } from './packages.mjs';

const check = process.argv.includes('--check');
const noInstall = process.argv.includes('--no-install');
const stale = [];

for (const [path, content] of Object.entries(generatedFiles())) {
  const file = join(ROOT, path);
  let old = '';
  try {
    old = readFileSync(file, 'utf8');
  } catch {}
  if (old === content) continue;
  stale.push(path);
  if (!check) writeFileSync(file, content);
}

let depsChanged = false;
for (const [dir, deps] of Object.entries(expectedDependencies())) {
  const file = join(ROOT, dir, 'package.json');
  const text = readFileSync(file, 'utf8');
  const pkg = JSON.parse(text);
  const field = CONSUMERS[dir].field;
  const current = pkg[field] ?? {};
  // Workspace packages that are gone are dropped; other dependencies stay as they are.
  const kept = Object.fromEntries(Object.entries(current).filter(([n, v]) => !(String(v).startsWith('workspace:') && !(n in deps))));
  const merged = { ...kept };
  for (const [name, version] of Object.entries(deps)) merged[name] ??= version;
  // The workspace packages first, in package order, then the rest as they were.
  const ordered = Object.fromEntries([
    ...Object.keys(deps).map((n) => [n, merged[n]]),
    ...Object.entries(merged).filter(([n]) => !(n in deps)),
  ]);
  if (JSON.stringify(ordered) === JSON.stringify(current)) continue;
  stale.push(`${dir}/package.json`);
  depsChanged = true;
  if (!check) writeFileSync(file, `${JSON.stringify({ ...pkg, [field]: ordered }, null, 2)}\n`);
}

if (check) {
  if (stale.length > 0) {
    console.error(`stale: ${stale.join(', ')}\nrun: pnpm sync:packages`);
    process.exit(1);
  }
  console.log('sync:packages: up to date');
} else {
  console.log(stale.length > 0 ? `sync:packages: wrote ${stale.join(', ')}` : 'sync:packages: up to date');
  if (depsChanged && !noInstall) execFileSync('pnpm', ['install'], { cwd: ROOT, stdio: 'inherit' });
}
