import { mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// The pipeline test starts a registry, installs, builds and drives Chromium: minutes, not seconds.
export default mergeConfig(sharedTestConfig, { test: { testTimeout: 600_000 } });
