import { describeChecks } from '@gpuhash/testing/vitest';
import { stressChecks } from './stress.checks';

describeChecks(stressChecks);
