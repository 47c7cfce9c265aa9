import { isSoftwareInfo, subgroupSizes } from './adapter-info';
import { requestNodeAdapter } from './adapter-node';
import { GpuUnavailableError } from './errors';
import { Gpu } from './gpu';
import { INSTALL_ADVICE } from './software-driver';

/** Options of `requestGpu`: which adapter to prefer, whether a software adapter will do, and features and limits. */
export interface RequestGpuOptions {
  /** Default 'high-performance'. */
  powerPreference?: GPUPowerPreference;
  /**
   * Whether a software adapter (SwiftShader) may be used when no hardware GPU is present.
   * Default true; with false, requestGpu throws GpuUnavailableError instead.
   */
  allowSoftware?: boolean;
  /** Features the caller cannot do without; requestGpu fails if the adapter lacks one. */
  requiredFeatures?: GPUFeatureName[];
  /** Features used when present. Default: subgroups and timestamp-query. */
  optionalFeatures?: GPUFeatureName[];
  /** Limits to ask for beyond gpuhash's defaults (the adapter's largest buffer and binding sizes). */
  requiredLimits?: Record<string, number>;
  /**
   * Node only: options passed to Dawn's `create()`. Default: `DEFAULT_DAWN_OPTIONS` (full-resolution
   * timestamps). Pass your own list to replace it.
   */
  dawnOptions?: string[];
  /** Where one-time notices go (the software fallback). Default: console.warn. */
  log?: (message: string) => void;
  label?: string;
}

/**
 * Dawn rounds timestamp queries to 2^16 ns unless told not to (a browser privacy measure); in Node
 * gpuhash times passes of well under a millisecond, so it asks for full resolution.
 */
export const DEFAULT_DAWN_OPTIONS: readonly string[] = ['disable-dawn-features=timestamp_quantization'];

const DEFAULT_OPTIONAL_FEATURES: GPUFeatureName[] = ['subgroups' as GPUFeatureName, 'timestamp-query'];

/** Limits gpuhash asks for at the adapter's maximum: tables want the largest buffers the device allows. */
const MAXED_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
] as const;

let softwareNoticeGiven = false;

export function browserGpu(): GPU | undefined {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  return nav?.gpu;
}

export function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof proc?.versions?.node === 'string';
}

/**
 * Acquires a WebGPU device: `navigator.gpu` in browsers, Dawn (the `webgpu` package) in Node,
 * with a SwiftShader fallback on CPU-only Linux. The device is created with the adapter's largest
 * buffer and binding limits and the optional features it supports.
 *
 * @example
 * ```ts
 * import { requestGpu } from '@gpuhash/core';
 *
 * const gpu = await requestGpu(); // throws GpuUnavailableError when there is no adapter
 * console.log(gpu.describe(), gpu.isSoftware);
 * // ... create tables on it ...
 * gpu.destroy();
 * ```
 *
 * @example Hardware only: refuse SwiftShader
 * ```ts
 * const gpu = await requestGpu({ allowSoftware: false, powerPreference: 'high-performance' });
 * ```
 */
export async function requestGpu(options: RequestGpuOptions = {}): Promise<Gpu> {
  const allowSoftware = options.allowSoftware ?? true;
  const powerPreference = options.powerPreference ?? 'high-performance';
  const log = options.log ?? ((m: string) => console.warn(m));
  let adapter: GPUAdapter | null;
  let software: boolean;

  const navigatorGpu = browserGpu();
  if (navigatorGpu) {
    adapter = await navigatorGpu.requestAdapter({ powerPreference });
    if (!adapter) {
      throw new GpuUnavailableError(
        'this browser exposes WebGPU but returned no adapter (the GPU may be blocklisted). Try a current Chrome, Edge or Firefox with hardware acceleration on.',
      );
    }
    software = isSoftwareInfo(adapter.info);
    if (software && !allowSoftware) {
      throw new GpuUnavailableError(`only a software adapter is available and allowSoftware is false. ${INSTALL_ADVICE}`);
    }
  } else if (isNode()) {
    const once = (m: string) => {
      if (!softwareNoticeGiven) log(m);
      softwareNoticeGiven = true;
    };
    const found = await requestNodeAdapter({
      powerPreference,
      allowSoftware,
      dawnOptions: options.dawnOptions ?? [...DEFAULT_DAWN_OPTIONS],
      log: once,
    });
    adapter = found.adapter;
    software = found.software;
  } else {
    throw new GpuUnavailableError(
      'WebGPU is not available here: no navigator.gpu and not Node. Use a browser with WebGPU (Chrome, Edge, Firefox, Safari 26+) or Node with the `webgpu` package.',
    );
  }
  return createGpu(adapter, software, options);
}

/** Opens a device on an adapter with gpuhash's features and limits (requestGpu and requestGpus). */
export async function createGpu(adapter: GPUAdapter, software: boolean, options: RequestGpuOptions): Promise<Gpu> {
  const features = new Set<GPUFeatureName>();
  for (const f of options.requiredFeatures ?? []) {
    if (!adapter.features.has(f)) throw new GpuUnavailableError(`the adapter lacks the required feature '${f}'.`);
    features.add(f);
  }
  for (const f of options.optionalFeatures ?? DEFAULT_OPTIONAL_FEATURES) if (adapter.features.has(f)) features.add(f);

  const requiredLimits: Record<string, number> = {};
  const adapterLimits = adapter.limits as unknown as Record<string, number>;
  for (const name of MAXED_LIMITS) {
    const value = adapterLimits[name];
    if (typeof value === 'number') requiredLimits[name] = value;
  }
  Object.assign(requiredLimits, options.requiredLimits);

  const device = await adapter.requestDevice({
    label: options.label ?? 'gpuhash',
    requiredFeatures: [...features],
    requiredLimits,
  });
  const sizes = subgroupSizes(adapter.info, adapter.limits);
  return new Gpu({
    device,
    adapterInfo: adapter.info,
    isSoftware: software,
    ownsDevice: true,
    subgroupMinSize: sizes.min,
    subgroupMaxSize: sizes.max,
  });
}

/**
 * Wraps a device the caller already has. gpuhash uses the features and limits the device was
 * created with, and `Gpu.destroy()` leaves the device alive.
 */
export function fromDevice(device: GPUDevice, options: { isSoftware?: boolean } = {}): Gpu {
  const info = (device as GPUDevice & { adapterInfo?: GPUAdapterInfo }).adapterInfo;
  const sizes = subgroupSizes(info, device.limits);
  return new Gpu({
    device,
    adapterInfo: info,
    isSoftware: options.isSoftware ?? isSoftwareInfo(info),
    ownsDevice: false,
    subgroupMinSize: sizes.min,
    subgroupMaxSize: sizes.max,
  });
}
