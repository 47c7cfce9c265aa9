import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BenchData, collectRuns } from './schema';

/**
 * Build time only (Node): apps/bench's committed results, or GPUHASH_BENCH_RESULTS=/some/dir to
 * preview results that are not committed yet. Shared by the page's data loader and the step that
 * writes one JSON asset per run for the run selector.
 */
export function benchResultsDir(docsDir: string): string {
  return process.env.GPUHASH_BENCH_RESULTS ?? join(docsDir, '../bench/results');
}

export function readBenchFiles(paths: string[]): BenchData {
  return collectRuns(
    paths.map((path) => {
      const file = path.split(/[\\/]/).at(-1) ?? path;
      try {
        return { file, json: JSON.parse(readFileSync(path, 'utf8')) as unknown };
      } catch (error) {
        return { file, error: `unreadable: ${(error as Error).message}` };
      }
    }),
  );
}

export function readBenchDir(dir: string): BenchData {
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    // No results directory: the page says there are no results yet.
  }
  return readBenchFiles(names.sort().map((f) => join(dir, f)));
}
