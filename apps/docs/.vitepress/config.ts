import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vitepress';
import { guides as packageGuides } from '../../../tools/workspace/packages.mjs';
import { workspaceAliases } from '../../../workspace-aliases.mjs';
import { benchResultsDir, readBenchDir } from '../lib/bench/load';
import { runAssetPath } from '../lib/bench/schema';
import { apiSidebar } from './api-sidebar';
import { nodeOnlyStubs } from './node-only';

const docsDir = fileURLToPath(new URL('..', import.meta.url));

/** Every benchmark run as its own JSON (the normalized run, not the raw file), by asset path. */
function benchRunAssets(): Map<string, string> {
  const { runs } = readBenchDir(benchResultsDir(docsDir));
  return new Map(runs.map((run) => [runAssetPath(run.file), JSON.stringify(run)]));
}

/** The dev server answers the run selector's fetches the way the built site's files do. */
function benchRunsDevServer(): Plugin {
  return {
    name: 'gpuhash-bench-runs',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const base = server.config.base.replace(/\/$/, '');
        const path = (req.url ?? '').split('?')[0]?.slice(base.length) ?? '';
        if (!path.startsWith('/bench/runs/')) return next();
        const body = benchRunAssets().get(path);
        if (body === undefined) return next();
        res.setHeader('content-type', 'application/json');
        res.end(body);
      });
    },
  };
}

/** The guides, from the packages' package.json (`gpuhash.guide`): tables first, then the toolkit. */
const guides = packageGuides();

export default defineConfig({
  title: 'gpuhash',
  description: 'GPU hash tables for TypeScript on WebGPU',
  srcDir: 'src',
  // Served from the site root by default; a project page (e.g. GitHub Pages) sets DOCS_BASE=/gpuhash/.
  base: process.env.DOCS_BASE ?? '/',
  lang: 'en',
  lastUpdated: false,
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: `${process.env.DOCS_BASE ?? '/'}favicon.svg` }]],
  // The run selector of the benchmarks page fetches older runs from these files.
  buildEnd(site) {
    for (const [path, body] of benchRunAssets()) {
      const file = join(site.outDir, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, body);
    }
  },
  markdown: { theme: { light: 'github-light', dark: 'github-dark' } },
  themeConfig: {
    logo: '/favicon.svg',
    nav: [
      { text: 'Getting started', link: '/getting-started' },
      { text: 'Guides', items: guides },
      { text: 'API', link: '/api/' },
      { text: 'Benchmarks', link: '/benchmarks' },
      { text: 'Playground', link: '/playground' },
      { text: 'npm (not yet published)', link: 'https://www.npmjs.com/org/gpuhash' },
    ],
    socialLinks: [{ icon: 'github', link: 'https://github.com/gpuhash/gpuhash', ariaLabel: 'gpuhash on GitHub' }],
    sidebar: [
      {
        text: 'Introduction',
        items: [
          { text: 'What is gpuhash?', link: '/' },
          { text: 'Getting started', link: '/getting-started' },
        ],
      },
      { text: 'Guides', items: guides },
      {
        text: 'Try and measure',
        items: [
          { text: 'Playground', link: '/playground' },
          { text: 'Benchmarks', link: '/benchmarks' },
        ],
      },
      { text: 'API reference', link: '/api/', items: apiSidebar() },
    ],
    // Local search: the index is built into the site, nothing is fetched from a search service.
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    footer: {
      message:
        'MIT licensed. Designs from published papers, explained and implemented in our own words and code. <a href="https://github.com/gpuhash/gpuhash">Source on GitHub</a> · <a href="https://www.npmjs.com/org/gpuhash">npm: @gpuhash (not yet published)</a>',
    },
  },
  vite: {
    // The packages are bundled from their TypeScript sources, so the site never shows a stale dist.
    resolve: { alias: workspaceAliases() },
    plugins: [nodeOnlyStubs(), benchRunsDevServer()],
    build: { chunkSizeWarningLimit: 1500 },
  },
});
