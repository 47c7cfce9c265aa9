import type { CheckSuite } from '@gpuhash/testing';

/** Every check suite of the workspace, loaded lazily so one broken suite does not hide the others. */
export const suiteLoaders: Record<string, () => Promise<CheckSuite[]>> = {
  kernels: async () => {
    const mods = await Promise.all([
      import('../../../packages/kernels/test/hash.checks'),
      import('../../../packages/kernels/test/cooperative.checks'),
      import('../../../packages/kernels/test/atomics.checks'),
      import('../../../packages/kernels/test/scan.checks'),
    ]);
    return mods.flatMap((m) => Object.values(m).filter(isSuite));
  },
  'linear-probe': async () => {
    const mods = await Promise.all([
      import('../../../packages/linear-probe/test/table.checks'),
      import('../../../packages/linear-probe/test/u64.checks'),
      import('../../../packages/linear-probe/test/stress.checks'),
      import('../../../packages/linear-probe/test/conformance.checks'),
    ]);
    return mods.flatMap((m) => Object.values(m).filter(isSuite));
  },
  hive: async () => {
    const mods = await Promise.all([
      import('../../../packages/hive/test/table.checks'),
      import('../../../packages/hive/test/pressure.checks'),
      import('../../../packages/hive/test/resize.checks'),
      import('../../../packages/hive/test/stress.checks'),
      import('../../../packages/hive/test/twins.checks'),
      import('../../../packages/hive/test/partition.checks'),
      import('../../../packages/hive/test/conformance.checks'),
    ]);
    return mods.flatMap((m) => Object.values(m).filter(isSuite));
  },
};

function isSuite(value: unknown): value is CheckSuite {
  return typeof value === 'object' && value !== null && 'suite' in value && 'checks' in value;
}
