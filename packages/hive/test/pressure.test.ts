import { describeChecks } from '@gpuhash/testing/vitest';
import { pressureChecks } from './pressure.checks';

describeChecks(pressureChecks);
