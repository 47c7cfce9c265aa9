import { describeChecks } from '@gpuhash/testing/vitest';
import { twinChecks } from './twins.checks';

describeChecks(twinChecks);
