/** Whether this browser exposes WebGPU at all (it may still fail to give an adapter). */
export function hasWebGpu(): boolean {
  return typeof navigator !== 'undefined' && 'gpu' in navigator && Boolean((navigator as { gpu?: unknown }).gpu);
}

/** Browsers that ship WebGPU, for the message shown where it is missing. */
export const WEBGPU_BROWSERS = [
  'Chrome or Edge 113 or newer on Windows, macOS and ChromeOS (Android: Chrome 121 or newer)',
  'Safari 26 or newer on macOS, iOS and iPadOS',
  'Firefox 141 or newer on Windows',
  'Chrome on Linux, with chrome://flags/#enable-unsafe-webgpu turned on',
] as const;
