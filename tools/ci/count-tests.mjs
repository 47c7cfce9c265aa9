// Sums vitest's JSON reports (test-results/vitest.json in every package) into the one line CI
// reads: "N passed, N failed". A package whose tests were expected but wrote no report fails.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
for (const group of ['packages', 'apps', 'tools']) {
  if (!existsSync(group)) continue;
  for (const name of readdirSync(group)) {
    const dir = join(group, name);
    const pkgPath = join(dir, 'package.json');
    if (!existsSync(pkgPath)) continue;
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
    if (!pkg.scripts?.test) continue;
    const report = join(dir, 'test-results', 'vitest.json');
    if (!existsSync(report)) {
      missing.push(dir);
      continue;
    }
    const r = JSON.parse(readFileSync(report, 'utf8'));
    passed += r.numPassedTests ?? 0;
    failed += (r.numFailedTests ?? 0) + (r.numFailedTestSuites ?? 0);
    skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  }
}
for (const dir of missing) console.log(`no test report from ${dir}: its tests did not run`);
failed += missing.length;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
