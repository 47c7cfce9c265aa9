export type { LaneMask } from './mask';
export {
  CG_NO_LANE,
  countOneBits,
  emptyMask,
  laneMaskModule,
  maskBelow,
  maskFirstLane,
  maskHas,
  maskLane,
  maskPopcount,
  maskRank,
  maskShr,
} from './mask';
export { ballotModel, LaneGrouping } from './model';
export type { CooperativeOptions } from './module';
export { cooperativeEntryParams, cooperativeModule, cooperativeVariantModule } from './module';
