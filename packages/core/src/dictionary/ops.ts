import { InvalidArgumentError, InvalidOpError } from '../errors';
import type { OpsInput } from './types';

/**
 * Operation codes of mixed batches (`apply`), the same in every gpuhash table, its kernels, the
 * bench and the docs: a batch built for one table runs unchanged on another.
 */
export const Op = {
  insert: 0,
  insertOrAssign: 1,
  find: 2,
  erase: 3,
} as const;
/** One of the `Op` codes of a mixed batch (`insert`, `insertOrAssign`, `find`, `erase`). */
export type OpCode = (typeof Op)[keyof typeof Op];

/** The largest op code. */
export const MAX_OP = Op.erase;

/**
 * Checks a host batch's op codes (every one an integer 0..3, `n` of them) and returns them as the
 * u32 words the kernels read, with the number of insert ops (insert and insertOrAssign).
 */
export function validateOps(where: string, ops: OpsInput, n: number): { words: Uint32Array; inserts: number } {
  if (!(ops instanceof Uint8Array || ops instanceof Uint32Array || Array.isArray(ops))) {
    throw new InvalidArgumentError(`${where}: ops must be a Uint8Array, a Uint32Array or an array of Op codes, got ${describeValue(ops)}`);
  }
  if (ops.length !== n) throw new InvalidArgumentError(`${where}: ops has ${ops.length} entries but keys has ${n}`);
  const words = new Uint32Array(n);
  let inserts = 0;
  for (let i = 0; i < n; i++) {
    const op = ops[i] as number;
    if (!(Number.isInteger(op) && op >= 0 && op <= MAX_OP)) throw new InvalidOpError(where, i, op, 'none');
    words[i] = op;
    if (op <= Op.insertOrAssign) inserts++;
  }
  return { words, inserts };
}

/** A short description of a value for error messages: its class, or its type. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'object') return (value as object).constructor?.name ?? 'an object';
  return typeof value;
}
