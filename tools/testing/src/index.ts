export type { CheckContext, CheckSuite, GpuCheck } from './checks';
export { checkRng, defineChecks } from './checks';
export { expectSameArrays, MismatchError } from './compare';
export { testGpu } from './gpu';
export type { Rng } from './rng';
export { createRng, defaultSeed } from './rng';
export type { KernelRun } from './run-kernel';
export { runKernelOnArrays } from './run-kernel';
