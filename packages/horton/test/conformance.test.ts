import { describeChecks } from '@gpuhash/testing/vitest';
import { hortonConformance } from './conformance.checks';

describeChecks(hortonConformance);
