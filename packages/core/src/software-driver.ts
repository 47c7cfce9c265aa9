/** Where Linux distributions put the SwiftShader Vulkan driver (Debian's chromium-common first). */
export const SWIFTSHADER_ICD_PATHS = [
  '/usr/lib/chromium/vk_swiftshader_icd.json',
  '/usr/lib/chromium-browser/vk_swiftshader_icd.json',
  '/usr/lib64/chromium-browser/vk_swiftshader_icd.json',
  '/usr/lib/x86_64-linux-gnu/chromium/vk_swiftshader_icd.json',
];

export const INSTALL_ADVICE = [
  'Install a GPU driver with Vulkan (Linux), Metal (macOS) or D3D12 (Windows) support,',
  'or, on Debian/Ubuntu without a GPU, the software driver: `apt-get install libvulkan1 chromium`',
  '(its SwiftShader Vulkan driver is found automatically), then run again.',
].join(' ');
