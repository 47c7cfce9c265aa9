import { describeChecks } from '@gpuhash/testing/vitest';
import { twinsChecks } from './twins.checks';

describeChecks(twinsChecks);
