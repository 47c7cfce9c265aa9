import { describeChecks } from '@gpuhash/testing/vitest';
import { u64Checks } from './u64.checks';

describeChecks(u64Checks);
