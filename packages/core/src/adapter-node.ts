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
    throw new GpuUnavailableError(`no WebGPU adapter was found, not even SwiftShader at ${icd}. ${INSTALL_ADVICE}`);
  }
  options.log(`gpuhash: no hardware GPU found; using the SwiftShader software driver (${icd}).`);
  return { adapter, software: true, fallbackIcd: icd };
}
