// Workspace packages resolved to their TypeScript sources, for tests (vitest) and for bundles
// built straight from source (the GPU-host runner). One list, so both resolve alike.
import { fileURLToPath } from 'node:url';

const entries = {
  '@gpuhash/testing/vitest': 'tools/testing/src/vitest.ts',
  '@gpuhash/testing': 'tools/testing/src/index.ts',
  '@gpuhash/core': 'packages/core/src/index.ts',
  '@gpuhash/kernels': 'packages/kernels/src/index.ts',
  '@gpuhash/linear-probe': 'packages/linear-probe/src/index.ts',
  '@gpuhash/hive': 'packages/hive/src/index.ts',
};

/** @returns {Record<string, string>} package name -> absolute path of its source entry */
export function workspaceAliases() {
  return Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, fileURLToPath(new URL(path, import.meta.url))]));
}
