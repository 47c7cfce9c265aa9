import { describeChecks } from '@gpuhash/testing/vitest';
import { hiveConformance } from './conformance.checks';

describeChecks(hiveConformance);
