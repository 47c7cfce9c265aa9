import type { CheckSuite } from '@gpuhash/testing';
import { checkModules } from './suites.generated';

/**
 * Every check suite of the workspace, per package (each packages/NAME/test/*.checks.ts, found by
 * `pnpm sync:packages`), loaded lazily so one broken suite does not hide the others.
 */
export const suiteLoaders: Record<string, () => Promise<CheckSuite[]>> = Object.fromEntries(
  Object.entries(checkModules).map(([name, load]) => [name, async () => (await load()).flatMap((m) => Object.values(m).filter(isSuite))]),
);

function isSuite(value: unknown): value is CheckSuite {
  return typeof value === 'object' && value !== null && 'suite' in value && 'checks' in value;
}
