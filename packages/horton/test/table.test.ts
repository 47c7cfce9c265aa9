import { describeChecks } from '@gpuhash/testing/vitest';
import { modelChecks, tableChecks } from './table.checks';

describeChecks(tableChecks);
describeChecks(modelChecks);
