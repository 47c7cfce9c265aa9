import { describeChecks } from '@gpuhash/testing/vitest';
import { modeChecks } from './modes.checks';

describeChecks(modeChecks);
