/**
 * Adapters in Node through Dawn (the optional `webgpu` package), with a SwiftShader fallback on
 * CPU-only Linux. Node only: the package's browser build (the `browser` and `default` export
 * conditions) replaces this module with adapter-browser.ts, so bundles for the web never see `fs`
 * or `webgpu` (see tsup.config.ts). Dawn crashes if the object returned by `create()` is garbage-collected while
 * devices live, so every instance made here is kept for the life of the process.
 */
import { describeInfo, isSoftwareInfo } from './adapter-info';
import { GpuUnavailableError } from './errors';
import { INSTALL_ADVICE, SWIFTSHADER_ICD_PATHS } from './software-driver';

export { INSTALL_ADVICE, SWIFTSHADER_ICD_PATHS };

interface DawnModule {
  create(options: string[]): GPU;
}

const keptInstances: GPU[] = [];
let dawnModule: Promise<DawnModule> | undefined;

function loadDawn(): Promise<DawnModule> {
  dawnModule ??= import(/* @vite-ignore */ 'webgpu' as string).then(
    (m: DawnModule) => m,
    (cause: unknown) => {
      dawnModule = undefined;
      throw new GpuUnavailableError(
        'WebGPU is not available in this Node process: install the `webgpu` package (`npm install webgpu`), which gpuhash uses as an optional peer dependency.',
        { cause },
      );
    },
  );
  return dawnModule;
}

async function fs() {
  return import(/* @vite-ignore */ 'node:fs' as string) as Promise<typeof import('node:fs')>;
}

/** The path of an installed SwiftShader ICD, if any (`GPUHASH_SWIFTSHADER_ICD` overrides the search). */
export async function findSwiftShaderIcd(): Promise<string | undefined> {
  const { existsSync } = await fs();
  const override = process.env.GPUHASH_SWIFTSHADER_ICD;
  if (override) return existsSync(override) ? override : undefined;
  return SWIFTSHADER_ICD_PATHS.find((p) => existsSync(p));
}

/**
 * Whether this Linux machine has a device node a hardware Vulkan driver opens: a DRM node
 * (/dev/dri: Mesa's drivers, most GPUs), NVIDIA's /dev/nvidiaN, or WSL's /dev/dxg. Without one, only
 * software drivers can answer, and probing them costs time and stderr noise: Dawn rejects Mesa's
 * lavapipe with a warning, or the loader reports that it found no GPU.
 */
async function linuxHasGpuNodes(): Promise<boolean> {
  const { existsSync, readdirSync } = await fs();
  const list = (dir: string): string[] => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  return existsSync('/dev/dxg') || list('/dev/dri').length > 0 || list('/dev').some((name) => /^nvidia\d+$/.test(name));
}

/**
 * Vulkan drivers that look for a Wayland display print "XDG_RUNTIME_DIR is invalid or not set" (twice
 * per Dawn instance) where it is unset, as in containers and CI; any absolute path quiets them.
 */
async function ensureXdgRuntimeDir(): Promise<void> {
  if (process.platform !== 'linux' || process.env.XDG_RUNTIME_DIR) return;
  const { tmpdir } = (await import(/* @vite-ignore */ 'node:os' as string)) as typeof import('node:os');
  process.env.XDG_RUNTIME_DIR = tmpdir();
}

export function isSoftwareAdapter(adapter: GPUAdapter): boolean {
  return isSoftwareInfo(adapter.info);
}

export interface NodeAdapterResult {
  adapter: GPUAdapter;
  software: boolean;
  /** Set when the SwiftShader fallback was taken. */
  fallbackIcd?: string;
}

export async function requestNodeAdapter(options: {
  powerPreference?: GPUPowerPreference;
  allowSoftware: boolean;
  dawnOptions: string[];
  log: (message: string) => void;
}): Promise<NodeAdapterResult> {
  const dawn = await loadDawn();
  await ensureXdgRuntimeDir();
  const explicitDriver = process.env.VK_ICD_FILENAMES ?? process.env.VK_DRIVER_FILES;
  // Linux without a GPU device node and no driver named: straight to SwiftShader, no probe.
  const probe = process.platform !== 'linux' || explicitDriver !== undefined || !options.allowSoftware || (await linuxHasGpuNodes());
  let first: GPUAdapter | null = null;
  if (probe) {
    const instance = dawn.create(options.dawnOptions);
    keptInstances.push(instance);
    first = await instance.requestAdapter({ powerPreference: options.powerPreference });
    if (first && !isSoftwareAdapter(first)) return { adapter: first, software: false };
  }

  if (!options.allowSoftware) {
    throw new GpuUnavailableError(
      first
        ? `only a software adapter (${describeInfo(first.info)}) is available and allowSoftware is false. ${INSTALL_ADVICE}`
        : `no WebGPU adapter was found. ${INSTALL_ADVICE}`,
    );
  }
  if (first) return { adapter: first, software: true };
  if (process.platform !== 'linux' || explicitDriver) {
    throw new GpuUnavailableError(
      `no WebGPU adapter was found${explicitDriver ? ` with the Vulkan driver ${explicitDriver}` : ''}. ${INSTALL_ADVICE}`,
    );
  }
  const icd = await findSwiftShaderIcd();
  if (!icd) throw new GpuUnavailableError(`no WebGPU adapter was found. ${INSTALL_ADVICE}`);
  // The Vulkan loader reads this when Dawn creates its next Vulkan instance.
  process.env.VK_ICD_FILENAMES = icd;
  const fallbackInstance = dawn.create(options.dawnOptions);
  keptInstances.push(fallbackInstance);
  const adapter = await fallbackInstance.requestAdapter({ powerPreference: options.powerPreference });
  if (!adapter) {
    // A worker thread's process.env is its own copy: the Vulkan loader never sees what it sets.
    const { isMainThread } = (await import(/* @vite-ignore */ 'node:worker_threads' as string)) as typeof import('node:worker_threads');
    const hint = isMainThread
      ? ''
      : ' (in a worker thread: set VK_ICD_FILENAMES in the main thread, or the environment, before the worker starts)';
    throw new GpuUnavailableError(`no WebGPU adapter was found, not even SwiftShader at ${icd}${hint}. ${INSTALL_ADVICE}`);
  }
  options.log(`gpuhash: no hardware GPU found; using the SwiftShader software driver (${icd}).`);
  return { adapter, software: true, fallbackIcd: icd };
}

// ---- several GPUs of one host -------------------------------------------------------------------

/** A GPU of this host, as the PCI bus lists it (Linux: /sys/bus/pci/devices). */
export interface HostGpu {
  /** The PCI address, 'DDDD:BB:DD.F' in lower case ('0000:3b:00.0'). */
  pciBusId: string;
  /** PCI vendor and device ids (0x10de is NVIDIA, 0x1002 AMD, 0x8086 Intel). */
  vendorId: number;
  deviceId: number;
  /** Vendor name as WebGPU adapters report it ('nvidia'), when the vendor id is a known one. */
  vendor: string | undefined;
}

/** PCI vendor ids of GPU makers, as WebGPU names them in `adapter.info.vendor`. */
const GPU_VENDORS: Record<number, string> = { 4318: 'nvidia', 4098: 'amd', 32902: 'intel', 5045: 'arm', 20803: 'qualcomm' };

/**
 * The GPUs of this host: PCI display controllers (class 0x03) of a GPU maker, in bus order (which is
 * also nvidia-smi's order). Server boards' management VGA chips (ASPEED, Matrox) are left out: they
 * have no Vulkan driver. Empty off Linux, or where /sys cannot be read.
 */
export async function listHostGpus(): Promise<HostGpu[]> {
  if (process.platform !== 'linux') return [];
  const { readdirSync, readFileSync } = await fs();
  const root = '/sys/bus/pci/devices';
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return [];
  }
  const found: HostGpu[] = [];
  for (const address of entries.sort()) {
    try {
      const read = (file: string) => Number.parseInt(readFileSync(`${root}/${address}/${file}`, 'utf8').trim(), 16);
      if (read('class') >> 16 !== 0x03) continue;
      const vendorId = read('vendor');
      const vendor = GPU_VENDORS[vendorId];
      if (!vendor) continue;
      found.push({ pciBusId: address.toLowerCase(), vendorId, deviceId: read('device'), vendor });
    } catch {}
  }
  return found;
}

/**
 * The environment that ties the next Vulkan instance of a process to one GPU through Mesa's
 * device-select layer (`DRI_PRIME=pci-DDDD_BB_DD_F` and `MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE=1`):
 * the instance then sees that GPU only. The layer reads it when the instance is created.
 */
export function gpuSelectionEnv(gpu: Pick<HostGpu, 'pciBusId'>): Record<string, string> {
  return {
    DRI_PRIME: `pci-${gpu.pciBusId.replace(/[:.]/g, '_')}`,
    MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE: '1',
  };
}

/**
 * The manifest of Mesa's Vulkan device-select layer (Debian's `mesa-vulkan-drivers`) if it is
 * installed as an implicit layer where the Vulkan loader looks (the XDG config and data folders,
 * /etc/vulkan and /usr/share/vulkan's implicit_layer.d); undefined otherwise. Without it, the GPUs
 * of a host with several identical ones cannot be told apart: Dawn opens the first one only.
 */
export async function findDeviceSelectLayer(): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  const { readdirSync, readFileSync } = await fs();
  const env = process.env;
  const home = env.HOME ?? '';
  const dirs = [
    env.XDG_CONFIG_HOME ?? `${home}/.config`,
    ...(env.XDG_CONFIG_DIRS ?? '/etc/xdg').split(':'),
    '/etc',
    env.XDG_DATA_HOME ?? `${home}/.local/share`,
    ...(env.XDG_DATA_DIRS ?? '/usr/local/share:/usr/share').split(':'),
  ]
    .filter((d) => d.startsWith('/'))
    .map((d) => `${d}/vulkan/implicit_layer.d`);
  for (const dir of dirs) {
    let files: string[];
    try {
      files = readdirSync(dir);
    } catch {
      continue;
    }
    for (const file of files.filter((f) => f.endsWith('.json'))) {
      try {
        if (readFileSync(`${dir}/${file}`, 'utf8').includes('VK_LAYER_MESA_device_select')) return `${dir}/${file}`;
      } catch {}
    }
  }
  return undefined;
}

/**
 * Sets environment variables of this process (the real environment, which the Vulkan loader and
 * its layers read) and returns a function that puts the old values back.
 */
export function setProcessEnv(vars: Record<string, string>): () => void {
  const old = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of Object.entries(old)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
