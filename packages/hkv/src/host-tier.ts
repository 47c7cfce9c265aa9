import { u64FromWords, u64Words } from '@gpuhash/core';
import { EV_WORDS } from './engine';
import { HkvStatus } from './types';
import { UpdateMode } from './wgsl/update';

const NONE = 0xffffffff;

/** What an insert-like batch left for the host tier to write (the kernels wrote only device-resident values). */
export interface HostTierBatch {
  /** The update mode (`UpdateMode`). */
  mode: number;
  /** Each key's status (`HkvStatus`), and the slot it was found or placed in (NONE: none). */
  status: Uint8Array;
  slots: Uint32Array;
  /** The batch's keys, (low, high) word pairs. */
  keyWords: Uint32Array;
  /** The batch's values, `dim` floats a key (empty for assignScores). */
  rows: Float32Array;
  /** The evicted entries' metadata (`EV_WORDS` words each: key low, high, score low, high, slot). */
  evMeta: Uint32Array;
  evicted: number;
  /** Out: the evicted entries' values, `dim` floats each (host-resident ones filled here). */
  evValues: Float32Array;
}

/**
 * The host tier's half of an insert-like batch: first the updates of present keys, then the
 * evicted entries' values (an entry this batch placed had its batch value; any other, the host
 * copy), then the values of keys placed and not evicted. `host` holds slots `deviceSlots` on,
 * `dim` floats each.
 *
 * An evicted entry is matched to the batch key that placed it by slot and key: the placed keys
 * sorted by (slot, index) in a `BigUint64Array`, searched by slot. A Map keyed by bigints did this
 * before; it cost a bigint a key and stops at 2^24 entries in V8, under a batch's size.
 */
export function applyHostTier(b: HostTierBatch, host: Float32Array, dim: number, deviceSlots: number): void {
  const { mode, status, slots, keyWords, rows, evMeta, evValues } = b;
  // Rows are copied float by float: a subarray a row costs an object each, more than its floats.
  const copy = (dst: Float32Array, at: number, src: Float32Array, from: number) => {
    for (let j = 0; j < dim; j++) dst[at + j] = src[from + j] as number;
  };
  const hostAt = (g: number) => (g - deviceSlots) * dim;
  const n = status.length;
  // Updates of present keys, and the keys this batch placed in host slots, as (index, slot) pairs.
  const pairs = new Uint32Array(2 * n);
  let placed = 0;
  for (let i = 0; i < n; i++) {
    const st = status[i] as number;
    const g = slots[i] as number;
    if (g === NONE || g < deviceSlots) continue;
    if (st === HkvStatus.inserted || st === HkvStatus.evicted) {
      pairs[2 * placed] = i;
      pairs[2 * placed + 1] = g;
      placed++;
    } else if (st === HkvStatus.updated && mode !== UpdateMode.assignScores) {
      const at = hostAt(g);
      if (mode === UpdateMode.accum) {
        for (let j = 0; j < dim; j++) host[at + j] = Math.fround((host[at + j] as number) + (rows[i * dim + j] as number));
      } else copy(host, at, rows, i * dim);
    }
  }
  // Sorted by slot (the high word), then index.
  const order = u64Words(u64FromWords(pairs, placed).sort());
  const slotAt = (p: number) => order[2 * p + 1] as number;
  const gone = new Uint8Array(n);
  for (let e = 0; e < b.evicted; e++) {
    const g = evMeta[EV_WORDS * e + 4] as number;
    if (g < deviceSlots) continue;
    const lo = evMeta[EV_WORDS * e] as number;
    const hi = evMeta[EV_WORDS * e + 1] as number;
    // The first placed pair at slot g, then the one holding this key.
    let a = 0;
    let z = placed;
    while (a < z) {
      const m = (a + z) >>> 1;
      if (slotAt(m) < g) a = m + 1;
      else z = m;
    }
    let source = -1;
    for (let p = a; p < placed && slotAt(p) === g; p++) {
      const i = order[2 * p] as number;
      if (keyWords[2 * i] === lo && keyWords[2 * i + 1] === hi) {
        source = i;
        break;
      }
    }
    if (source >= 0) {
      gone[source] = 1;
      copy(evValues, e * dim, rows, source * dim);
    } else copy(evValues, e * dim, host, hostAt(g));
  }
  for (let p = 0; p < placed; p++) {
    const i = order[2 * p] as number;
    if (gone[i] === 0) copy(host, hostAt(slotAt(p)), rows, i * dim);
  }
}
