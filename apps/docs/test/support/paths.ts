import { fileURLToPath } from 'node:url';

/** apps/docs, wherever the tests run from. */
export const DOCS_DIR = fileURLToPath(new URL('../../', import.meta.url));
/** The built site. */
export const SITE_DIR = `${DOCS_DIR}.vitepress/dist`;
export const SCREENSHOTS_DIR = `${DOCS_DIR}test-results/screenshots`;
/** Where the site's benchmark page reads results from (the same override as src/benchmarks.data.ts). */
export const BENCH_RESULTS_DIR = process.env.GPUHASH_BENCH_RESULTS
  ? `${process.env.GPUHASH_BENCH_RESULTS.replace(/\/$/, '')}/`
  : fileURLToPath(new URL('../../../bench/results/', import.meta.url));
