import { describeChecks } from '@gpuhash/testing/vitest';
import { stressChecks } from './stress.checks';

// Kernels over 4 slot windows compile for a minute or more each on SwiftShader: the windowed cases
// run on the GPU only (tools/gpu-check runs every check of the suite); conformance.test.ts covers
// tables in 2 windows here.
describeChecks({ ...stressChecks, checks: stressChecks.checks.filter((c) => !c.name.includes('bindings)')) });
