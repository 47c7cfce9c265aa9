import type { Gpu } from '@gpuhash/core';
import { createRng, defaultSeed, type Rng } from './rng';

/**
 * A GPU check: one behaviour of a kernel asserted against its CPU reference. Checks are plain
 * async functions so the same code runs under vitest (SwiftShader in CI) and in the standalone
 * GPU-host runner (tools/gpu-check), where `scale` makes the inputs larger.
 */
export interface CheckContext {
  gpu: Gpu;
  rng: Rng;
  /** Input size multiplier: 1 under vitest, larger on a real GPU. */
  scale: number;
}

export interface GpuCheck {
  name: string;
  run(ctx: CheckContext): Promise<void>;
}

export interface CheckSuite {
  suite: string;
  checks: GpuCheck[];
}

export function defineChecks(suite: string, checks: GpuCheck[]): CheckSuite {
  return { suite, checks };
}

/** Seeds differ per check (derived from its name) so checks do not share inputs. */
export function checkRng(suite: string, check: string, seed = defaultSeed()): Rng {
  let h = seed >>> 0;
  for (const ch of `${suite}/${check}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return createRng(h);
}
