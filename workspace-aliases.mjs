// Workspace packages resolved to their TypeScript sources, for tests (vitest) and for bundles
// built straight from source (the GPU-host runner, the bench, the docs). Derived from the package
// list (tools/workspace/packages.mjs: every packages/*/package.json, and tools/testing).
import { fileURLToPath } from 'node:url';
import { sourceEntries } from './tools/workspace/packages.mjs';

/** @returns {Record<string, string>} package name -> absolute path of its source entry */
export function workspaceAliases() {
  return Object.fromEntries(Object.entries(sourceEntries()).map(([name, path]) => [name, fileURLToPath(new URL(path, import.meta.url))]));
}
