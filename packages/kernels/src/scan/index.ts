export type { CompactOutputs } from './compact';
export { COMPACT_PARAMS_WORDS, compactWithScanWgsl } from './compact';
export type { ScanConfig, ScanParams } from './config';
export {
  DEFAULT_SCAN_CONFIG,
  packScanParams,
  SCAN_PARAMS_WORDS,
  scanBlockSize,
  scanConfigKey,
  scanConstants,
  scanLevelSizes,
  scanWorkgroupBytes,
  validateScanConfig,
} from './config';
export type { CompactResult } from './cpu';
export { compactCpu, exclusiveScanCpu, scanBlockSumsCpu } from './cpu';
export type { ScanDownsweepVariant } from './downsweep';
export { downsweepVariantKey, scanDownsweepWgsl } from './downsweep';
export { scanReduceWgsl } from './reduce';
export { blockScanModule, scanParamsModule, workgroupScanModule } from './workgroup';
