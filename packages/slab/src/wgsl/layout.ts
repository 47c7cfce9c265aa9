import { wgslModule } from '@gpuhash/kernels';
import { BUSY_KEY, EMPTY_KEY, EMPTY_POINTER, TOMBSTONE_KEY } from '../sentinels';

const hex = (v: number) => `0x${v.toString(16)}u`;

/**
 * The slab layout in WGSL. A slab is 16 cells of two words (`vec2`): in map and multimap mode cell
 * c < 15 is (key, value) and cell 15 is (auxiliary, next); in set mode both words of cells 0..14
 * and the first word of cell 15 are keys (31 per slab), and the second word of cell 15 is next.
 * `SET_MODE` is a constant of the composed kernel.
 */
export const layoutModule = wgslModule(
  'slab.layout',
  /* wgsl */ `
const EMPTY_KEY: u32 = ${hex(EMPTY_KEY)};
const TOMBSTONE_KEY: u32 = ${hex(TOMBSTONE_KEY)};
const BUSY_KEY: u32 = ${hex(BUSY_KEY)};
const EMPTY_POINTER: u32 = ${hex(EMPTY_POINTER)};
const NONE: u32 = 0xffffffffu;
const SLAB_CELLS: u32 = 16u;
const NEXT_CELL: u32 = 15u;

/** Whether a key is one of the slot states (never stored as a user key). */
fn sl_reserved(k: u32) -> bool { return k >= BUSY_KEY; }

/** The first word of cell c holds a key (map: cells 0..14; set: every cell). */
fn sl_key_a(c: u32) -> bool { return SET_MODE || c < NEXT_CELL; }
/** The second word of cell c holds a key (set mode, cells 0..14). */
fn sl_key_b(c: u32) -> bool { return SET_MODE && c < NEXT_CELL; }
`,
);
