import { Op } from '@gpuhash/core';

/**
 * The CPU reference every dictionary table is tested against: a Map with the tables' batch semantics. Where the GPU may legally pick one
 * of several outcomes (duplicate keys in one batch), `insert` returns the allowed values and the
 * test adopts the value the GPU chose once it has checked it is allowed.
 */
export class TableModel<K extends number | bigint = number> {
  readonly map = new Map<K, number>();

  get size(): number {
    return this.map.size;
  }

  /** Applies an insert batch; returns, per key of the batch, the values it may hold afterwards. */
  insert(keys: ArrayLike<K>, values: ArrayLike<number>, assign: boolean): Map<K, Set<number>> {
    const batch = new Map<K, number[]>();
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as K;
      let list = batch.get(k);
      if (!list) batch.set(k, (list = []));
      list.push(values[i] as number);
    }
    const allowed = new Map<K, Set<number>>();
    for (const [k, list] of batch) {
      const old = this.map.get(k);
      if (old !== undefined && !assign) {
        allowed.set(k, new Set([old]));
        continue;
      }
      allowed.set(k, new Set(list));
      this.map.set(k, list[0] as number);
    }
    return allowed;
  }

  erase(keys: ArrayLike<K>): number {
    let n = 0;
    for (let i = 0; i < keys.length; i++) if (this.map.delete(keys[i] as K)) n++;
    return n;
  }
}

/**
 * Checks find results for `keys` against the model. Keys with several allowed values must hold
 * one of them; the model then adopts the GPU's choice.
 */
export function expectMatchesModel<K extends number | bigint>(
  keys: ArrayLike<K>,
  found: Uint8Array,
  values: Uint32Array,
  model: TableModel<K>,
  allowed: Map<K, Set<number>> = new Map(),
): void {
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as K;
    const want = model.map.has(k);
    if ((found[i] === 1) !== want) {
      throw new Error(`key 0x${k.toString(16)} at index ${i}: found=${found[i]} but the model ${want ? 'has' : 'lacks'} it`);
    }
    if (!want) continue;
    const v = values[i] as number;
    const options = allowed.get(k);
    if (options ? !options.has(v) : v !== model.map.get(k)) {
      throw new Error(
        `key 0x${k.toString(16)} at index ${i}: value ${v}, expected ${options ? `one of ${[...options].join(', ')}` : model.map.get(k)}`,
      );
    }
    model.map.set(k, v);
  }
}

/** What a mixed batch (`apply`) returned on the host. */
export interface AppliedBatch {
  values: Uint32Array;
  status: Uint8Array;
}

/**
 * Checks a mixed batch over distinct keys, which has the sequential outcome, against the model
 * and applies it there: a find returns the model's value (0 and status 0 when absent), an erase
 * reports whether the key was present, an insert whether it was new (insertOrAssign also stores
 * its value over an old one). Throws naming the first op that differs.
 */
export function expectApplyMatchesModel(
  ops: ArrayLike<number>,
  keys: ArrayLike<number>,
  values: ArrayLike<number>,
  result: AppliedBatch,
  model: TableModel<number>,
  what: string,
): void {
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as number;
    const had = model.map.has(k);
    const op = ops[i] as number;
    const status = result.status[i];
    const fail = (m: string) => {
      throw new Error(`${what}: op ${i} (code ${op}, key 0x${k.toString(16)}): ${m}`);
    };
    if (op === Op.find) {
      if (status !== (had ? 1 : 0)) fail(`find status ${status}, the model ${had ? 'has' : 'lacks'} the key`);
      const want = had ? (model.map.get(k) as number) : 0;
      if (result.values[i] !== want) fail(`find value ${result.values[i]}, expected ${want}`);
    } else if (op === Op.erase) {
      if (status !== (had ? 1 : 0)) fail(`erase status ${status}, the model ${had ? 'has' : 'lacks'} the key`);
      model.map.delete(k);
    } else {
      if (status !== (had ? 0 : 1)) fail(`insert status ${status}, the model ${had ? 'has' : 'lacks'} the key`);
      if (!had || op === Op.insertOrAssign) model.map.set(k, values[i] as number);
    }
  }
}
