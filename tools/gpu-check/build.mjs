// Bundles the checks runner into one ESM file (webgpu external) for ../shared/gpu-host/pack.sh.
import { build } from 'esbuild';
import { workspaceAliases } from '../../workspace-aliases.mjs';

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/gpu-check.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['webgpu'],
  alias: workspaceAliases(),
  // vitest is never imported by check suites; fail loudly if one does.
  logLevel: 'warning',
});
console.log('wrote dist/gpu-check.mjs');
