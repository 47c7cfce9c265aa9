// Two builds of one entry. dist/index.js (the `node` export condition) finds adapters through Dawn
// (adapter-node.ts: the `webgpu` package, SwiftShader's ICD found with `fs`); dist/browser.js (the
// `browser` and `default` conditions) has adapter-browser.ts in its place and uses navigator.gpu
// only, so web bundlers never meet a Node built-in. Both share dist/index.d.ts: the same exports.
import { defineConfig, type Options } from 'tsup';
import shared from '../../tsup.shared';

const browserAdapter: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'gpuhash-browser-adapter',
  setup(build) {
    build.onResolve({ filter: /^\.\/adapter-node$/ }, (args) => ({ path: `${args.resolveDir}/adapter-browser.ts` }));
  },
};

export default defineConfig([
  // Cleans dist/ but the browser build's files, which the build beside it may have written already.
  { ...shared, platform: 'node', clean: ['!browser.js', '!browser.js.map'] },
  {
    ...shared,
    entry: { browser: 'src/index.ts' },
    platform: 'browser',
    dts: false,
    clean: false,
    esbuildPlugins: [browserAdapter],
  },
]);
