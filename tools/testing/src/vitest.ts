import { describe, it } from 'vitest';
import { type CheckSuite, checkRng } from './checks';
import { testGpu } from './gpu';

/** Registers every check of a suite as a vitest test on the shared test GPU (scale 1). */
export function describeChecks(suite: CheckSuite, scale = 1): void {
  describe(suite.suite, () => {
    for (const check of suite.checks) {
      it(check.name, async () => {
        const gpu = await testGpu();
        await check.run({ gpu, rng: checkRng(suite.suite, check.name), scale });
      });
    }
  });
}
