import { describeChecks } from '@gpuhash/testing/vitest';
import { bchtConformance } from './conformance.checks';

describeChecks(bchtConformance);
