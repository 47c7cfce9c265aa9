import { wgslModule } from './compose';

/**
 * Marks on the indices a kernel appends to a failed list. Core's `FailureFlag` decodes them; the
 * two must agree (core's tests check they do).
 */
export const FAILURE_FLAGS = {
  /** A reserved key, or an op code out of range in a mixed batch. */
  reserved: 0x8000_0000,
  /** An insert gave up on contended locks (it runs again; not a full table). */
  contended: 0x4000_0000,
  /** The batch index is in the low 30 bits. */
  indexMask: 0x3fff_ffff,
} as const;

const hex = (v: number) => `0x${v.toString(16)}u`;

/**
 * `report_failure(index)`: appends to the kernel's `failed: array<atomic<u32>>` binding. Word 0
 * counts every failure exactly; indices are kept while the list has room. OR an index with
 * FAILURE_RESERVED or FAILURE_CONTENDED to mark why.
 */
export const failureListModule = wgslModule(
  'kernels.failure-list',
  /* wgsl */ `
const FAILURE_RESERVED: u32 = ${hex(FAILURE_FLAGS.reserved)};
const FAILURE_CONTENDED: u32 = ${hex(FAILURE_FLAGS.contended)};
fn report_failure(index: u32) {
  let at = atomicAdd(&failed[0], 1u);
  if (1u + at < arrayLength(&failed)) { atomicStore(&failed[1u + at], index); }
}`,
  { needs: ['failed'] },
);
