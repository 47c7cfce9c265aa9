export { workgroupAppendModule } from './append';
export type { AtomicResult } from './atomics';
export {
  atomicHelpers,
  atomicResultModule,
  cpuAddBounded,
  cpuCas,
  cpuClaimBit,
  cpuClaimLowest,
  cpuReleaseBit,
  lowestFreeBit,
} from './atomics';
export type { ComposeOptions, ConstantValue, WgslModule, WgslModuleDeps } from './compose';
export { composeWgsl, constantDeclaration, sourceKey, WgslCompositionError, wgslModule } from './compose';
export type { CooperativeOptions, LaneMask } from './cooperative';
export {
  ballotModel,
  CG_NO_LANE,
  cooperativeEntryParams,
  cooperativeModule,
  cooperativeVariantModule,
  countOneBits,
  emptyMask,
  LaneGrouping,
  laneMaskModule,
  maskBelow,
  maskFirstLane,
  maskHas,
  maskLane,
  maskPopcount,
  maskRank,
  maskShr,
} from './cooperative';
export { declaredNames, stripWgslComments, undeclaredNeeds } from './declared-names';
export type { WorkgroupSizeExpr } from './entry';
export { entryPoint } from './entry';
export { FAILURE_FLAGS, failureListModule } from './failure-list';
export { gridModule } from './grid';
export type { U64Words, UniversalParams } from './hash';
export {
  bitHash1,
  bitHash2,
  bitHashModule,
  byteMatch,
  fmix32,
  fmix32Module,
  fmix64,
  fmix64Module,
  fmix64U32,
  fmix64Words,
  jenkins,
  jenkinsModule,
  jenkinsSeeded,
  randomUniversalParams,
  UNIVERSAL_PRIME,
  u32AddSat,
  u64Add,
  u64AddSat,
  u64FromWords,
  u64Le,
  u64Lt,
  u64Module,
  u64Mul,
  u64MulWide,
  u64OrderModule,
  u64ToWords,
  universalHash,
  universalHashModP,
  universalModule,
  xxhash32,
  xxhash32Module,
} from './hash';
export { chunkLoop, gridStrideLoop, unrolled } from './loops';
export * from './scan';
export { tallyConstant, workgroupTalliesModule } from './tallies';
export type { StorageWindows } from './windows';
export { rewriteWindowedAccesses, WindowedAccessError, windowedViews, windowNames } from './windows';
