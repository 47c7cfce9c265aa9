import { describeChecks } from '@gpuhash/testing/vitest';
import { slabConformance } from './conformance.checks';

describeChecks(slabConformance);
