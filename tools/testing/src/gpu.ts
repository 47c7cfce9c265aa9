import { type Gpu, requestGpu } from '@gpuhash/core';

let shared: Promise<Gpu> | undefined;

/**
 * One Gpu per test process (Dawn devices are expensive to create): a hardware GPU when present,
 * SwiftShader otherwise. Set GPUHASH_REQUIRE_HARDWARE=1 to fail instead of falling back.
 */
export function testGpu(): Promise<Gpu> {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  shared ??= requestGpu({ allowSoftware: env.GPUHASH_REQUIRE_HARDWARE !== '1', log: () => {} });
  return shared;
}
