import type { DeviceArray } from './device-array';

/** What a table's host `find` returns, the same for every gpuhash table. */
export interface FindResult {
  /** The value of each found key; 0 where `found` is 0. */
  values: Uint32Array;
  /** 1 where the key was found, else 0. */
  found: Uint8Array;
}

/** What a table's device-resident `find` returns: one u32 per key in each array. */
export interface DeviceFindResult {
  values: DeviceArray<'u32'>;
  found: DeviceArray<'u32'>;
}
