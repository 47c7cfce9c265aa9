import { wgslModule } from '../compose';
import { fmix32, fmix32Module } from './fmix32';

/**
 * Bob Jenkins' 32-bit integer hash (the six-shift version, as published on Thomas Wang's integer
 * hash page), the primary hash of Horton tables (Breslow et al., USENIX ATC 2016), and a seeded family of it.
 *
 * `hash_jenkins_seeded(key, seed)` is `hash_jenkins(key ^ hash_fmix32(seed))`: seed 0 is the plain
 * function (fmix32(0) = 0), and distinct seeds xor the key with well-spread masks (~16 differing
 * bits), so f seeds give f functions whose bucket choices are close to independent.
 *
 * WGSL: `fn hash_jenkins(key: u32) -> u32`, `fn hash_jenkins_seeded(key: u32, seed: u32) -> u32`.
 */
export const jenkinsModule = wgslModule(
  'kernels.hash.jenkins',
  /* wgsl */ `
fn hash_jenkins(key: u32) -> u32 {
  var a = key;
  a = (a + 0x7ed55d16u) + (a << 12u);
  a = (a ^ 0xc761c23cu) ^ (a >> 19u);
  a = (a + 0x165667b1u) + (a << 5u);
  a = (a + 0xd3a2646cu) ^ (a << 9u);
  a = (a + 0xfd7046c5u) + (a << 3u);
  a = (a ^ 0xb55a4f09u) ^ (a >> 16u);
  return a;
}

fn hash_jenkins_seeded(key: u32, seed: u32) -> u32 {
  return hash_jenkins(key ^ hash_fmix32(seed));
}
`,
  [fmix32Module],
);

/** CPU twin of `hash_jenkins`. */
export function jenkins(key: number): number {
  let a = key | 0;
  a = (a + 0x7ed55d16 + (a << 12)) | 0;
  a = a ^ 0xc761c23c ^ (a >>> 19);
  a = (a + 0x165667b1 + (a << 5)) | 0;
  a = ((a + 0xd3a2646c) | 0) ^ (a << 9);
  a = (a + 0xfd7046c5 + (a << 3)) | 0;
  a = a ^ 0xb55a4f09 ^ (a >>> 16);
  return a >>> 0;
}

/** CPU twin of `hash_jenkins_seeded`: member `seed` of the Jenkins family (seed 0 = `jenkins`). */
export function jenkinsSeeded(key: number, seed: number): number {
  return jenkins((key ^ fmix32(seed)) >>> 0);
}
