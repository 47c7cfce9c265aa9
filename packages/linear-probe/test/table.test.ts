import { describeChecks } from '@gpuhash/testing/vitest';
import { linearProbeChecks } from './table.checks';

describeChecks(linearProbeChecks);
