// The build every publishable package shares: ESM, declarations, sourcemaps, Dawn left external.
import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

// Run by tsup in the package's folder.
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies?: Record<string, string> };

/**
 * Declarations that use GPUDevice, GPUBuffer and the other WebGPU globals bring their types along:
 * a package that depends on @webgpu/types references it from its .d.ts, so a consumer's plain
 * `tsc` resolves them with no `types` setting of its own (rollup-plugin-dts drops the directive
 * from the sources, hence a banner).
 */
const webgpuTypes = pkg.dependencies?.['@webgpu/types'] !== undefined;

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: webgpuTypes ? { banner: '/// <reference types="@webgpu/types" />' } : true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  external: ['webgpu'],
  tsconfig: 'tsconfig.build.json',
});
