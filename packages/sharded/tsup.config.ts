// Two builds of one entry, as in @gpuhash/core: dist/index.js (the `node` export condition) can
// open shard worker threads and processes (node/transport.ts: worker_threads, child_process);
// dist/browser.js (`browser` and `default`) has node/transport-browser.ts in its place, so web
// bundlers never meet a Node built-in. Both share dist/index.d.ts.
import { defineConfig, type Options } from 'tsup';
import shared from '../../tsup.shared';

const browserTransport: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'gpuhash-browser-transport',
  setup(build) {
    build.onResolve({ filter: /^\.\/node\/transport$/ }, (args) => ({ path: `${args.resolveDir}/node/transport-browser.ts` }));
  },
};

export default defineConfig([
  { ...shared, platform: 'node', clean: ['!browser.js', '!browser.js.map'] },
  {
    ...shared,
    entry: { browser: 'src/index.ts' },
    platform: 'browser',
    dts: false,
    clean: false,
    esbuildPlugins: [browserTransport],
  },
]);
