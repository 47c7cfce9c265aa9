// Bundles one TypeScript entry of the workspace into one ESM file (webgpu external), resolving
// workspace packages to their sources. Usage: node bundle-entry.mjs SRC OUT
import { build } from 'esbuild';
import { workspaceAliases } from '../../workspace-aliases.mjs';

const [entry, outfile] = process.argv.slice(2);
if (!entry || !outfile) {
  console.error('usage: node bundle-entry.mjs SRC OUT');
  process.exit(2);
}
await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['webgpu'],
  alias: workspaceAliases(),
  logLevel: 'warning',
});
