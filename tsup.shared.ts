// The build every publishable package shares: ESM, declarations, sourcemaps, Dawn left external.
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  external: ['webgpu'],
  tsconfig: 'tsconfig.build.json',
});
