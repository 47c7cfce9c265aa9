/** Reading what an adapter says about itself, the same way for Dawn and browsers. */
type InfoWithExtras = GPUAdapterInfo & { isFallbackAdapter?: boolean; subgroupMinSize?: number; subgroupMaxSize?: number };

/** Whether the adapter is a software renderer (SwiftShader, llvmpipe, WARP, or a fallback adapter). */
export function isSoftwareInfo(info: GPUAdapterInfo | undefined): boolean {
  if (!info) return false;
  if ((info as InfoWithExtras).isFallbackAdapter) return true;
  const text = `${info.vendor} ${info.architecture} ${info.device} ${info.description}`.toLowerCase();
  return /swiftshader|llvmpipe|lavapipe|software|microsoft basic render/.test(text);
}

/** Subgroup sizes from adapter info (current spec) or limits (older browsers); 0 when unknown. */
export function subgroupSizes(info: GPUAdapterInfo | undefined, limits?: unknown): { min: number; max: number } {
  const i = info as InfoWithExtras | undefined;
  const l = limits as { minSubgroupSize?: number; maxSubgroupSize?: number } | undefined;
  return { min: i?.subgroupMinSize ?? l?.minSubgroupSize ?? 0, max: i?.subgroupMaxSize ?? l?.maxSubgroupSize ?? 0 };
}

/** One line naming an adapter (vendor / architecture / device / description), or 'unknown adapter'. */
export function describeInfo(info: GPUAdapterInfo | undefined): string {
  if (!info) return 'unknown adapter';
  return [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' / ') || 'unknown adapter';
}
