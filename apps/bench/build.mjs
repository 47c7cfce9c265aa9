// Bundles the benchmark CLI into one ESM file (webgpu external) for `node dist/gpuhash-bench.mjs`
// here and for ../shared/gpu-host/pack.sh on a GPU host without Node tooling.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { workspaceAliases } from '../../workspace-aliases.mjs';

// Paths relative to this file, so the build works from any working directory.
const here = (path) => fileURLToPath(new URL(path, import.meta.url));

await build({
  entryPoints: [here('src/cli.ts')],
  outfile: here('dist/gpuhash-bench.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['webgpu'],
  alias: workspaceAliases(),
  // CommonJS dependencies (cli-progress) require Node's built-ins: give the ESM bundle a require.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __gpuhashCreateRequire } from 'node:module';\nconst require = __gpuhashCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
console.log('wrote dist/gpuhash-bench.mjs');
