import { describeChecks } from '@gpuhash/testing/vitest';
import { resizeChecks } from './resize.checks';

describeChecks(resizeChecks);
