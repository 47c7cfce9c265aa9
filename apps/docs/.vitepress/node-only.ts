import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vitepress';

const emptyModule = fileURLToPath(new URL('./empty-module.ts', import.meta.url));

/** Modules @gpuhash/core imports only when it runs in Node (Dawn, the file system). */
const NODE_ONLY = new Set(['webgpu', 'node:fs']);

/**
 * Keeps Node-only imports of the workspace packages out of the browser bundle: core loads Dawn
 * and node:fs lazily, in Node only, while in a browser it uses navigator.gpu. Without this, Vite
 * would try to bundle Dawn's native addon, or warn about externalising node:fs.
 */
export function nodeOnlyStubs(): Plugin {
  return {
    name: 'gpuhash-docs:node-only-stubs',
    enforce: 'pre',
    resolveId(id, importer) {
      if (NODE_ONLY.has(id) && importer?.includes('/packages/')) return emptyModule;
      return null;
    },
  };
}
