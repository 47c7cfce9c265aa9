import { Op } from '@gpuhash/core';
import { check } from './keys';
import type { Rng } from './rng';

/** What a mixed batch (`apply`) returned, as the stress model reads it. */
export interface StressBatchResult {
  /** 1 where a find found its key (other ops: ignored). */
  status: ArrayLike<number>;
  /** A find's value where it found its key. */
  values: ArrayLike<number>;
  /** Batch indices of the inserts that could not be placed (not acknowledged). */
  failed?: ArrayLike<number>;
}

/**
 * The bookkeeping of a concurrent stress check, where the order of the ops inside one mixed batch
 * is the GPU's to choose: every value ever stored under each key (a find or an export may return
 * any of them, never another), and the keys acknowledged as present (inserted by a batch that
 * reported no failure for them and erased by none since), which a find must never miss.
 */
export class StressModel {
  /** Every value ever stored under each key. */
  readonly stored = new Map<number, Set<number>>();
  /** Keys acknowledged as present. */
  readonly present = new Set<number>();
  /** Finds that returned a value, and finds that had to (their key acknowledged and not erased by the batch). */
  checkedFinds = 0;
  mustFinds = 0;

  /** Records `value` as stored under `key`. */
  note(key: number, value: number): void {
    let s = this.stored.get(key);
    if (!s) this.stored.set(key, (s = new Set()));
    s.add(value);
  }

  /** Records a batch of plain inserts: every value noted, the keys not in `failed` acknowledged. */
  inserted(keys: ArrayLike<number>, values: ArrayLike<number>, failed: ArrayLike<number> = []): void {
    const lost = new Set(Array.from(failed));
    for (let i = 0; i < keys.length; i++) {
      this.note(keys[i] as number, values[i] as number);
      if (!lost.has(i)) this.present.add(keys[i] as number);
    }
  }

  /** Checks one mixed batch against the model, then applies it (see the class comment). */
  applied(what: string, ops: ArrayLike<number>, keys: ArrayLike<number>, values: ArrayLike<number>, result: StressBatchResult): void {
    const erased = new Set<number>();
    for (let i = 0; i < ops.length; i++) {
      if (ops[i] === Op.erase) erased.add(keys[i] as number);
      if ((ops[i] as number) <= Op.insertOrAssign) this.note(keys[i] as number, values[i] as number);
    }
    const failed = new Set(Array.from(result.failed ?? []));
    for (const i of failed) check(result.status[i] === 0, `${what}: failed insert ${i} reported status 1`);
    for (let i = 0; i < ops.length; i++) {
      if (ops[i] !== Op.find) continue;
      const k = keys[i] as number;
      const must = this.present.has(k) && !erased.has(k);
      if (must) this.mustFinds++;
      if (result.status[i] === 1) {
        this.checkedFinds++;
        check(
          this.stored.get(k)?.has(result.values[i] as number) ?? false,
          `${what}: find of 0x${k.toString(16)} returned ${result.values[i]}, never stored under it`,
        );
      } else {
        check(!must, `${what}: key 0x${k.toString(16)} was acknowledged and not erased, but a find missed it`);
      }
    }
    // Keys the batch erased may or may not be back (an insert in the same batch may have won):
    // they leave the model until a full read of the table says (contents). Inserts of the batch
    // that did not fail are acknowledged unless it also erased their key.
    for (const k of erased) this.present.delete(k);
    for (let i = 0; i < ops.length; i++) {
      const k = keys[i] as number;
      if ((ops[i] as number) <= Op.insertOrAssign && !erased.has(k) && !failed.has(i)) this.present.add(k);
    }
    this.erasedLast = erased;
  }

  /**
   * Checks a full read of the table (key to value, each key once): every value was stored under its
   * key and every acknowledged key is there. Keys the last batch erased that the table still holds
   * are acknowledged again (their insert won).
   */
  contents(what: string, pairs: ReadonlyMap<number, number>): void {
    for (const [k, v] of pairs)
      check(this.stored.get(k)?.has(v) ?? false, `${what}: 0x${k.toString(16)} holds ${v}, never stored under it`);
    for (const k of this.present) check(pairs.has(k), `${what}: acknowledged key 0x${k.toString(16)} was lost`);
    for (const k of this.erasedLast) if (pairs.has(k)) this.present.add(k);
  }

  private erasedLast = new Set<number>();
}

/**
 * A mixed batch of n ops for a stress check: a quarter of them on the `hot` keys (conflicts inside
 * the batch), the rest drawn from `keys`; ops drawn by weight (find, insertOrAssign, insert,
 * erase); random values.
 */
export function mixedBatch(
  rng: Rng,
  n: number,
  keys: ArrayLike<number>,
  hot: ArrayLike<number>,
  weights: readonly [find: number, insertOrAssign: number, insert: number, erase: number],
): { keys: Uint32Array; ops: Uint8Array; values: Uint32Array } {
  const [find, assign, insert, erase] = weights;
  const batch = { keys: new Uint32Array(n), ops: new Uint8Array(n), values: rng.u32Array(n) };
  for (let i = 0; i < n; i++) {
    batch.keys[i] = (rng.below(4) === 0 ? hot[rng.below(hot.length)] : keys[rng.below(keys.length)]) as number;
    const r = rng.below(find + assign + insert + erase);
    batch.ops[i] = r < find ? Op.find : r < find + assign ? Op.insertOrAssign : r < find + assign + insert ? Op.insert : Op.erase;
  }
  return batch;
}
