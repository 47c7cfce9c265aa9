import { defineConfig } from 'vitest/config';
import { workspaceAliases } from './workspace-aliases.mjs';

/**
 * Shared vitest settings: workspace packages resolve to their TypeScript sources, so tests run
 * against the code as written (no build needed) and never against a stale dist.
 */
export const sharedTestConfig = defineConfig({
  resolve: { alias: workspaceAliases() },
  test: {
    // Dawn's Vulkan loader complains on every device creation when this is unset.
    env: { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp' },
    // Dawn owns one GPU device per worker; two workers keep a 2-core CI machine busy.
    pool: 'forks',
    maxWorkers: 2,
    // Long enough for the slowest property checks on SwiftShader with two workers on two cores
    // (Horton's conformance sequences with growth take about 30 s alone, 61 s beside a build).
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // The JSON report is what .ci/run counts.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
