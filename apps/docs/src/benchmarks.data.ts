import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { defineLoader } from 'vitepress';
import { type BenchData, collectRuns } from '../lib/bench/schema';

declare const data: BenchData;

export { data };

// Read at build time from apps/bench's committed results; the page ships the numbers, not the files.
// GPUHASH_BENCH_RESULTS=/some/dir previews results that are not committed yet.
const dir = process.env.GPUHASH_BENCH_RESULTS ?? '../../bench/results';

export default defineLoader({
  watch: [`${dir.replace(/\/$/, '')}/*.json`],
  load(files: string[]): BenchData {
    return collectRuns(
      files.map((path) => {
        try {
          return { file: basename(path), json: JSON.parse(readFileSync(path, 'utf8')) as unknown };
        } catch (error) {
          return { file: basename(path), error: `unreadable: ${(error as Error).message}` };
        }
      }),
    );
  },
});
