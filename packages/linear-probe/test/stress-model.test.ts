import { Op } from '@gpuhash/core';
import { StressModel } from '@gpuhash/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** A mixed batch run on a Map in one serial order: one legal outcome of the batch on a GPU. */
function serialRun(table: Map<number, number>, batch: Batch, order: number[]) {
  const status = new Uint32Array(batch.ops.length);
  const values = new Uint32Array(batch.ops.length);
  for (const i of order) {
    const [op, k, v] = [batch.ops[i], batch.keys[i] as number, batch.values[i] as number];
    if (op === Op.find) {
      status[i] = table.has(k) ? 1 : 0;
      values[i] = table.get(k) ?? 0;
    } else if (op === Op.erase) {
      table.delete(k);
    } else if (op === Op.insertOrAssign || !table.has(k)) {
      table.set(k, v);
    }
  }
  return { status, values };
}

interface Batch {
  ops: number[];
  keys: number[];
  values: number[];
}

const op = fc.constantFrom(Op.insert, Op.insertOrAssign, Op.find, Op.erase);
const batch = fc.array(fc.tuple(op, fc.nat({ max: 15 }), fc.nat({ max: 999 })), { minLength: 1, maxLength: 40 }).chain((rows) =>
  fc.record({
    ops: fc.constant(rows.map((r) => r[0] as number)),
    keys: fc.constant(rows.map((r) => r[1])),
    values: fc.constant(rows.map((r) => r[2])),
    order: fc.shuffledSubarray(
      rows.map((_, i) => i),
      { minLength: rows.length, maxLength: rows.length },
    ),
  }),
);

describe('StressModel (the bookkeeping of the mixed-batch stress checks)', () => {
  it('accepts every serial order of random mixed batches, and the table they leave', () => {
    fc.assert(
      fc.property(fc.array(batch, { minLength: 1, maxLength: 8 }), (batches) => {
        const table = new Map<number, number>();
        const model = new StressModel();
        batches.forEach((b, round) => {
          model.applied(`round ${round}`, b.ops, b.keys, b.values, serialRun(table, b, b.order));
          model.contents(`round ${round}`, table);
        });
      }),
    );
  });

  it('rejects a find that returns a value never stored, and a miss of an acknowledged key', () => {
    fc.assert(
      fc.property(batch, fc.nat({ max: 15 }), (b, k) => {
        const model = new StressModel();
        model.inserted([k], [7]);
        const find = { ops: [Op.find], keys: [k], values: [0] };
        expect(() => model.applied('wrong value', find.ops, find.keys, find.values, { status: [1], values: [5000] })).toThrow(
          /never stored/,
        );
        expect(() => model.applied('lost key', find.ops, find.keys, find.values, { status: [0], values: [0] })).toThrow(/missed it/);
        // The same miss is legal when the batch also erases the key.
        const erase = { ops: [Op.find, Op.erase], keys: [k, k], values: [0, 0] };
        model.applied('erased', erase.ops, erase.keys, erase.values, { status: [0, 0], values: [0, 0] });
        // A table that lost an acknowledged key fails the contents check.
        const other = new StressModel();
        const table = new Map<number, number>();
        other.applied('batch', b.ops, b.keys, b.values, serialRun(table, b, b.order));
        const [first] = other.present;
        if (first !== undefined) {
          const lost = new Map(table);
          lost.delete(first);
          expect(() => other.contents('lost', lost)).toThrow(/was lost/);
        }
      }),
    );
  });
});
