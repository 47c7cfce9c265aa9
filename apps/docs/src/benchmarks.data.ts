import { defineLoader } from 'vitepress';
import { readBenchFiles } from '../lib/bench/load';
import { type BenchPage, byDevice } from '../lib/bench/schema';

declare const data: BenchPage;

export { data };

// Read at build time from apps/bench's committed results. The page ships the newest run of each
// device and a list of the others; each run is also written as its own JSON asset
// (.vitepress/config.ts, `runAssetPath`), fetched only when a visitor selects it.
// GPUHASH_BENCH_RESULTS=/some/dir previews results that are not committed yet.
const dir = process.env.GPUHASH_BENCH_RESULTS ?? '../../bench/results';

export default defineLoader({
  watch: [`${dir.replace(/\/$/, '')}/*.json`],
  load(files: string[]): BenchPage {
    return byDevice(readBenchFiles(files));
  },
});
