import type { WgslModule } from '@gpuhash/kernels';

/**
 * How keys and slots are laid out for one key width. The kernels are written once against this:
 * WGSL type `Key`, the modules below, and a few expression templates for reading keys.
 */
export interface KeyLayout {
  readonly name: 'u32' | 'u64';
  readonly wordsPerKey: 1 | 2;
  readonly wordsPerSlot: 2 | 4;
  /** WGSL type of one slot in the read-only view of the table. */
  readonly slotType: string;
  /** WGSL element type of `slots_ro` in find kernels (u32 keys read slots in aligned pairs). */
  readonly findSlotType: string;
  /** The word an empty table is filled with (every word of every slot). */
  readonly emptyWord: number;
  /**
   * `Key`, result codes, `lp_home`, and the slot view: `slot_is_live(s)`, `slot_is_tomb(s)`,
   * `slot_key(s)`, `slot_value(s)` over a read-only slot. Needs `params` (linearProbeParams).
   */
  readonly common: WgslModule;
  /** `lp_insert`, `lp_erase`, `lp_find_atomic` over `slots: array<atomic<u32>>`. */
  readonly protocol: WgslModule;
  /** `lp_find` over `slots_ro: array<slotType>` (dispatches that do not write the table). */
  readonly find: WgslModule;
  /** WGSL expression: key number `i` of the `keys` binding. */
  readKey(i: string): string;
  /** WGSL statement: store `key` as entry `at` of the `out_keys` binding. */
  writeKey(at: string, key: string): string;
  /** WGSL expression: true when `key` may not be stored (the layout reserves it). */
  isReserved(key: string): string;
}
