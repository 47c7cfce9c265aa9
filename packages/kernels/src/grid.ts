import { wgslModule } from './compose';

/**
 * Grid-stride indexing over two-dimensional dispatches. The runtime folds large dispatches into
 * (x, y) so no dimension passes 65,535 workgroups; kernels loop with the full grid as stride.
 */
export const gridModule = wgslModule(
  'kernels.grid',
  /* wgsl */ `
fn grid_workgroup(wid: vec3<u32>, nwg: vec3<u32>) -> u32 { return wid.y * nwg.x + wid.x; }
fn grid_thread(wid: vec3<u32>, nwg: vec3<u32>, lid: u32, wg_size: u32) -> u32 { return grid_workgroup(wid, nwg) * wg_size + lid; }
fn grid_threads(nwg: vec3<u32>, wg_size: u32) -> u32 { return nwg.x * nwg.y * wg_size; }
`,
);
