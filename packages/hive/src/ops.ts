import { OP_ERASE, OP_FIND, OP_INSERT, OP_INSERT_OR_ASSIGN } from './wgsl/common';

/** Operation codes for `apply` batches (the same codes as every gpuhash table and the bench). */
export const Op = {
  insert: OP_INSERT,
  insertOrAssign: OP_INSERT_OR_ASSIGN,
  find: OP_FIND,
  erase: OP_ERASE,
} as const;
export type OpCode = (typeof Op)[keyof typeof Op];
