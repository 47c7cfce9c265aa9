import { describeChecks } from '@gpuhash/testing/vitest';
import { partitionChecks } from './partition.checks';

describeChecks(partitionChecks);
