import { defineConfig } from 'vitepress';
import { guides as packageGuides } from '../../../tools/workspace/packages.mjs';
import { workspaceAliases } from '../../../workspace-aliases.mjs';
import { apiSidebar } from './api-sidebar';
import { nodeOnlyStubs } from './node-only';

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
  markdown: { theme: { light: 'github-light', dark: 'github-dark' } },
  themeConfig: {
    logo: '/favicon.svg',
    nav: [
      { text: 'Getting started', link: '/getting-started' },
      { text: 'Guides', items: guides },
      { text: 'API', link: '/api/' },
      { text: 'Benchmarks', link: '/benchmarks' },
      { text: 'Playground', link: '/playground' },
    ],
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
    footer: { message: 'MIT licensed. Designs from published papers, explained and implemented in our own words and code.' },
  },
  vite: {
    // The packages are bundled from their TypeScript sources, so the site never shows a stale dist.
    resolve: { alias: workspaceAliases() },
    plugins: [nodeOnlyStubs()],
    build: { chunkSizeWarningLimit: 1500 },
  },
});
