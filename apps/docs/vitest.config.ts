import { mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// The browser test builds the site and drives Chromium on SwiftShader: give it minutes, not seconds.
export default mergeConfig(sharedTestConfig, {
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
