import type { ParamValues } from '@gpuhash/core';

/** Invocations per workgroup of every linear-probe kernel. */
export const WORKGROUP_SIZE = 256;

/**
 * The `Params` uniform every linear-probe kernel binds (the layout modules read it): n, the batch
 * size (or the capacity, for passes over the table); mask, capacity - 1; max_probes, the probe
 * bound; seed, the hash seed (0 until a rebuild draws a new one to break up colliding keys; u64
 * keys fold it into their low word).
 */
export const linearProbeParams = {
  n: 'u32',
  mask: 'u32',
  max_probes: 'u32',
  seed: 'u32',
} as const;

export type LinearProbeParams = typeof linearProbeParams;
export type LinearProbeParamValues = ParamValues<LinearProbeParams>;
