/**
 * Operation codes of mixed batches (`apply`), the same in every gpuhash table, its kernels and the
 * bench: a batch built for one table runs unchanged on another.
 */
export const Op = {
  insert: 0,
  insertOrAssign: 1,
  find: 2,
  erase: 3,
} as const;
export type OpCode = (typeof Op)[keyof typeof Op];
