import { describeChecks } from '@gpuhash/testing/vitest';
import { cacheChecks } from './cache.checks';

describeChecks(cacheChecks);
