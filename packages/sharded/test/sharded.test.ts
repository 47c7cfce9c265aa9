import { describeChecks } from '@gpuhash/testing/vitest';
import { shardedChecks } from './sharded.checks';

describeChecks(shardedChecks);
