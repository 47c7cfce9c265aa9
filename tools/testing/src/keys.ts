import { fmix32 } from '@gpuhash/kernels';
import type { Rng } from './rng';

/** Throws with `message` unless `condition` holds (checks run outside vitest too). */
export function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

/** n distinct keys, none of them in `reserved`: batches draw from it so hits, misses and re-inserts mix. */
export function universe(rng: Rng, n: number, reserved: readonly number[]): Uint32Array {
  return rng.distinctU32(n, reserved);
}

/** n keys drawn from `from` with repetition. */
export function pick(rng: Rng, from: ArrayLike<number>, n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = from[rng.below(from.length)] as number;
  return out;
}

/**
 * The benchmark suite's keys: fmix32(2j + offset) for j = 0, 1, ... (distinct, since fmix32 is a
 * bijection; offset 1 gives the keys, 2 the misses), skipping `reserved` words.
 */
export function benchKeys(n: number, reserved: readonly number[], offset = 1): Uint32Array {
  const skip = new Set(reserved);
  const out = new Uint32Array(n);
  for (let j = 0, i = 0; i < n; j++) {
    const k = fmix32(2 * j + offset);
    if (!skip.has(k)) out[i++] = k;
  }
  return out;
}
