/**
 * The browser build's stand-in for adapter-node.ts (tsup.config.ts swaps it in for the `browser`
 * and `default` export conditions): the same exports, without `fs` or the `webgpu` package, so a
 * web bundle needs no Node built-ins. In a browser requestGpu uses `navigator.gpu` and never gets
 * here; this build loaded in Node (a bundle made for the web, run by Node) says what to do instead.
 */

import { isSoftwareInfo } from './adapter-info';
import type * as NodeAdapter from './adapter-node';
import { GpuUnavailableError } from './errors';
import { INSTALL_ADVICE, SWIFTSHADER_ICD_PATHS } from './software-driver';

export type { NodeAdapterResult } from './adapter-node';
export { INSTALL_ADVICE, SWIFTSHADER_ICD_PATHS };

/** Node only: in the browser build there is no file system to search, so never a path. */
export const findSwiftShaderIcd: typeof NodeAdapter.findSwiftShaderIcd = async () => undefined;

export const isSoftwareAdapter: typeof NodeAdapter.isSoftwareAdapter = (adapter) => isSoftwareInfo(adapter.info);

export const requestNodeAdapter: typeof NodeAdapter.requestNodeAdapter = async () => {
  throw new GpuUnavailableError(
    "this is @gpuhash/core's browser build, which has no Node support (Dawn): Node resolves the package's `node` export condition; a bundle meant for Node must be built for Node (esbuild --platform=node, Vite SSR).",
  );
};

export type { HostGpu } from './adapter-node';

/** Node only: a browser sees one GPU, through navigator.gpu, and no PCI bus. */
export const listHostGpus: typeof NodeAdapter.listHostGpus = async () => [];

export const gpuSelectionEnv: typeof NodeAdapter.gpuSelectionEnv = () => ({});

export const findDeviceSelectLayer: typeof NodeAdapter.findDeviceSelectLayer = async () => undefined;

export const setProcessEnv: typeof NodeAdapter.setProcessEnv = () => () => {};
