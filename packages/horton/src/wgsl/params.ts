import type { ParamValues } from '@gpuhash/core';

/** Invocations per workgroup of every Horton kernel. */
export const WORKGROUP_SIZE = 256;

/**
 * The `Params` uniform every Horton kernel binds: n, the batch size (or the slot count, for
 * passes over the table); mask, buckets - 1; seed, the hash seed (0 until a rebuild for colliding
 * keys draws another); epoch, the number of the insert round or erase pass, and prio_bits, the
 * bits of a bucket ownership stamp below the epoch (see insert.ts); flags, per kernel (insert
 * rounds: bit 0 the planning pass, bit 1 the last round).
 */
export const hortonParams = {
  n: 'u32',
  mask: 'u32',
  seed: 'u32',
  epoch: 'u32',
  prio_bits: 'u32',
  flags: { type: 'u32', default: 0 },
} as const;

export type HortonParams = typeof hortonParams;
export type HortonParamValues = ParamValues<HortonParams>;
