import type { Kernel } from '@gpuhash/core';
import { cooperativeModule, type WgslModule, wgslModule } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';

const cache = new Map<string, Kernel>();

/** One Kernel object per name and variant, built on first use (the pipeline cache keys on it). */
export function cachedKernel(name: string, variant: string, build: () => string): Kernel {
  const key = `${name}|${variant}`;
  let k = cache.get(key);
  if (!k) {
    k = { name: `hive.${name}`, cacheKey: variant, source: build(), workgroupSize: WORKGROUP_SIZE };
    cache.set(key, k);
  }
  return k;
}

/** The entry point every Hive kernel uses; cooperative kernels add the subgroup builtins. */
export function entryPoint(extraParams = ''): string {
  return /* wgsl */ `@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(num_workgroups) nwg: vec3<u32>, ${extraParams})`;
}

/**
 * A loop over the dispatch's items in whole-workgroup chunks: every lane of a workgroup runs the
 * same iterations (item `i` may be past `count`), so cooperative groups stay converged.
 */
export function chunkLoop(count: string): string {
  return `for (var base = grid_workgroup(wid, nwg) * ${WORKGROUP_SIZE}u; base < ${count}; base += grid_threads(nwg, ${WORKGROUP_SIZE}u))`;
}

/** A grid-stride loop of one item per invocation: \`index\` runs over 0 .. count - 1 (lanes diverge at the end). */
export function gridLoop(index: string, count: string): string {
  return `for (var ${index} = grid_thread(wid, nwg, lid, ${WORKGROUP_SIZE}u); ${index} < ${count}; ${index} += grid_threads(nwg, ${WORKGROUP_SIZE}u))`;
}

const variants = new Map<string, WgslModule>();

/**
 * A WGSL module in two variants, over subgroups or over groups of one invocation; it requires the
 * common declarations and the matching cooperative module.
 */
export function cooperativeVariant(name: string, subgroups: boolean, code: string, requires: readonly WgslModule[] = []): WgslModule {
  const key = `${name}.${subgroups ? 'sg' : 'fb'}`;
  let m = variants.get(key);
  if (!m) variants.set(key, (m = wgslModule(key, code, [commonModule, cooperativeModule({ subgroups }), ...requires])));
  return m;
}
