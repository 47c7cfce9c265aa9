import type { Gpu } from '@gpuhash/core';
import type { DeviceRecord } from './results';

// The limits that bound what a benchmark can allocate and dispatch.
const LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
] as const;

/** What the results record about the device: adapter, driver, subgroups, features, limits, Dawn options. */
export function describeDevice(gpu: Gpu, dawnOptions: string[] = []): DeviceRecord {
  const info = gpu.adapterInfo;
  const limits: Record<string, number> = {};
  for (const name of LIMITS) {
    const value = (gpu.limits as unknown as Record<string, number | undefined>)[name];
    if (typeof value === 'number') limits[name] = value;
  }
  return {
    description: gpu.describe(),
    vendor: info?.vendor ?? '',
    architecture: info?.architecture ?? '',
    device: info?.device ?? '',
    driver: info?.description ?? '',
    isSoftware: gpu.isSoftware,
    subgroups: gpu.subgroups.supported,
    subgroupMinSize: gpu.subgroups.minSize,
    subgroupMaxSize: gpu.subgroups.maxSize,
    timestamps: gpu.hasTimestamps,
    features: [...gpu.features].sort(),
    dawnOptions,
    limits,
  };
}
