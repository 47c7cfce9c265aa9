import { describeInfo } from './adapter-info';
import { findDeviceSelectLayer, gpuSelectionEnv, type HostGpu, listHostGpus, requestNodeAdapter, setProcessEnv } from './adapter-node';
import { InvalidArgumentError } from './errors';
import type { Gpu } from './gpu';
import { browserGpu, createGpu, DEFAULT_DAWN_OPTIONS, isNode, type RequestGpuOptions, requestGpu } from './request-gpu';

/** Options of `requestGpus`: those of `requestGpu`, applied to every GPU, and how many to open. */
export interface RequestGpusOptions extends RequestGpuOptions {
  /** Open at most this many GPUs, the first ones the host lists (PCI bus order). Default: all of them. */
  count?: number;
}

/** What `requestGpus` found and why it opened what it did (`onPlan`, for logs and benchmarks). */
export interface GpuPlan {
  /** The host's GPUs (Linux PCI bus; empty elsewhere). */
  hostGpus: HostGpu[];
  /** The device-select layer's manifest, where one is installed. */
  layer: string | undefined;
  /** 'each': one device per GPU, tied through the layer; 'one': a single GPU, as requestGpu picks it. */
  mode: 'each' | 'one';
  /** Why only one was opened, when the host has more. */
  reason?: string;
}

/**
 * Opens every GPU of this host, one `Gpu` each, each on its own GPU. Which physical GPU comes
 * first is the device-select layer's choice, not promised (on two H100s the first `Gpu` was on the
 * second PCI device).
 *
 * - Browsers (and Node hosts with one GPU, or none but a software driver): one `Gpu`, as `requestGpu` gives.
 * - Node on Linux with several GPUs: Dawn cannot pick the second of two identical GPUs (its
 *   `adapter=NAME` option takes the first whose name matches), so each GPU is opened through Mesa's
 *   Vulkan device-select layer (Debian's `mesa-vulkan-drivers`, installed as an implicit layer):
 *   `DRI_PRIME=pci-DDDD_BB_DD_F` and `MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE=1` are set while that
 *   GPU's Vulkan instance is created, then restored. Without the layer one GPU is opened, and `log`
 *   says why. A GPU whose adapter turns out to be another vendor's (the layer fell back) is left out.
 *
 * @example
 * ```ts
 * import { requestGpus } from '@gpuhash/core';
 *
 * const gpus = await requestGpus(); // one per GPU of the host; [gpu] in a browser
 * console.log(gpus.map((g) => g.describe()));
 * for (const gpu of gpus) gpu.destroy();
 * ```
 */
export async function requestGpus(options: RequestGpusOptions & { onPlan?: (plan: GpuPlan) => void } = {}): Promise<Gpu[]> {
  const count = options.count ?? Number.POSITIVE_INFINITY;
  if (!(count === Number.POSITIVE_INFINITY || (Number.isInteger(count) && count >= 1))) {
    throw new InvalidArgumentError(`requestGpus: count must be a positive integer, got ${String(options.count)}`);
  }
  const log = options.log ?? ((m: string) => console.warn(m));
  const one = async (plan: GpuPlan) => {
    options.onPlan?.(plan);
    if (plan.reason && plan.hostGpus.length > 1 && count > 1) log(`gpuhash: ${plan.reason}`);
    return [await requestGpu(options)];
  };
  if (browserGpu() || !isNode()) return one({ hostGpus: [], layer: undefined, mode: 'one', reason: 'a browser exposes one GPU' });
  const hostGpus = await listHostGpus();
  if (hostGpus.length <= 1 || count === 1) return one({ hostGpus, layer: undefined, mode: 'one' });
  const layer = await findDeviceSelectLayer();
  if (!layer) {
    return one({
      hostGpus,
      layer,
      mode: 'one',
      reason: `this host has ${hostGpus.length} GPUs, but Mesa's Vulkan device-select layer is not installed as an implicit layer (Debian/Ubuntu: apt-get install mesa-vulkan-drivers, which puts VkLayer_MESA_device_select.json in /usr/share/vulkan/implicit_layer.d); opening one GPU.`,
    });
  }
  options.onPlan?.({ hostGpus, layer, mode: 'each' });
  const gpus: Gpu[] = [];
  for (const host of hostGpus.slice(0, count)) {
    const restore = setProcessEnv(gpuSelectionEnv(host));
    let adapter: GPUAdapter;
    try {
      // A fresh Dawn instance: the layer reads the environment when its Vulkan instance is created.
      ({ adapter } = await requestNodeAdapter({
        powerPreference: options.powerPreference ?? 'high-performance',
        allowSoftware: false,
        dawnOptions: options.dawnOptions ?? [...DEFAULT_DAWN_OPTIONS],
        log,
      }));
    } finally {
      restore();
    }
    if (host.vendor && adapter.info.vendor && adapter.info.vendor.toLowerCase() !== host.vendor) {
      log(`gpuhash: the GPU at ${host.pciBusId} (${host.vendor}) opened as ${describeInfo(adapter.info)}; left out.`);
      continue;
    }
    gpus.push(await createGpu(adapter, false, { ...options, label: options.label ?? `gpuhash.gpu${gpus.length}` }));
  }
  if (gpus.length === 0) return [await requestGpu(options)];
  return gpus;
}
