import { describeChecks } from '@gpuhash/testing/vitest';
import { linearProbeConformance, linearProbeU64Conformance } from './conformance.checks';

describeChecks(linearProbeConformance);
describeChecks(linearProbeU64Conformance);
