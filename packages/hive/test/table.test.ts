import { describeChecks } from '@gpuhash/testing/vitest';
import { tableChecks } from './table.checks';

describeChecks(tableChecks);
