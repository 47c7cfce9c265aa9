import { type StorageAccess, storage } from '@gpuhash/core';
import { type StorageWindows, windowedViews } from '@gpuhash/kernels';

/**
 * How a kernel variant binds the slots buffer (the table's buckets, then the stash lines): whole
 * (`windows` 1), or split into `windows` bindings of 2^windowBucketsLog2 buckets each, for tables
 * past one storage binding (an H100 binds at most 2^31 - 4 bytes: 2^23 buckets would need 2^31).
 * A bucket never straddles two windows, and every view of the slots (words, 16-byte words) splits
 * at the same bucket boundaries.
 */
export interface SlotWindows {
  windows: number;
  windowBucketsLog2: number;
}

/** The variant fields of a table in one binding (every kernel's default). */
export const ONE_WINDOW: SlotWindows = { windows: 1, windowBucketsLog2: 0 };

/** log2 of a bucket's bytes (32 slots of key and value). */
const BUCKET_BYTES_LOG2 = 8;

/** A binding of the slots buffer as `element`s: one buffer, or a list of `windows` buffers. */
export function slotsBinding(access: StorageAccess, element: string, v: SlotWindows) {
  return storage(access, element, v.windows);
}

/**
 * composeWgsl's `windows` entries for the views of the slots a kernel binds (name → element
 * type): none when the slots are in one binding (the kernel's WGSL is then the unwindowed one).
 */
export function slotWindows(v: SlotWindows, views: Readonly<Record<string, string>>): StorageWindows[] {
  return windowedViews(v.windows, v.windowBucketsLog2 + BUCKET_BYTES_LOG2, views);
}
