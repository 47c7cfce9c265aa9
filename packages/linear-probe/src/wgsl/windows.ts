import { type StorageAccess, storage } from '@gpuhash/core';
import { type StorageWindows, windowedViews } from '@gpuhash/kernels';
import { keyLayout } from './key-layouts';
import type { KeyLayout } from './layout';

/**
 * How a kernel variant binds the slot array: whole (`windows` 1), or split into `windows`
 * bindings of 2^windowSlotsLog2 slots each, for tables past one storage binding (an H100 binds at
 * most 2^31 - 4 bytes: 2^28 u32 slots would need 2^31). A slot never straddles two windows, and
 * every view of the table (words, slots, slot pairs) splits at the same slot boundaries.
 */
export interface SlotWindows {
  windows: number;
  windowSlotsLog2: number;
}

/** The variant fields of a table in one binding (every kernel's default). */
export const ONE_WINDOW: SlotWindows = { windows: 1, windowSlotsLog2: 0 };

/** A binding of the slot array as `element`s: one buffer, or a list of `windows` buffers. */
export function slotsBinding(access: StorageAccess, element: string, v: SlotWindows) {
  return storage(access, element, v.windows);
}

/**
 * composeWgsl's `windows` entries for the slot arrays a kernel binds (name → element type): none
 * when the table is in one binding (the kernel's WGSL is then exactly the unwindowed one).
 */
export function slotWindows(v: SlotWindows & { layout: KeyLayout['name'] }, arrays: Readonly<Record<string, string>>): StorageWindows[] {
  const slotBytesLog2 = Math.log2(4 * keyLayout(v.layout).wordsPerSlot);
  return windowedViews(v.windows, v.windowSlotsLog2 + slotBytesLog2, arrays);
}
