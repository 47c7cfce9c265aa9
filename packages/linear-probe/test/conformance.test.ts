import { describeChecks } from '@gpuhash/testing/vitest';
import {
  linearProbeConformance,
  linearProbeU64Conformance,
  linearProbeU64WindowedConformance,
  linearProbeWindowedConformance,
} from './conformance.checks';

describeChecks(linearProbeConformance);
describeChecks(linearProbeU64Conformance);
describeChecks(linearProbeWindowedConformance);
describeChecks(linearProbeU64WindowedConformance);
