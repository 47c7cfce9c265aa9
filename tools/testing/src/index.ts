export { createRng, defaultSeed } from './rng';
export type { Rng } from './rng';
export { MismatchError, expectSameArrays } from './compare';
export { testGpu } from './gpu';
export { runKernelOnArrays } from './run-kernel';
export type { KernelRun } from './run-kernel';
export { checkRng, defineChecks } from './checks';
export type { CheckContext, CheckSuite, GpuCheck } from './checks';
