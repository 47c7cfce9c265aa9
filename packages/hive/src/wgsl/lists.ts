import { wgslModule } from '@gpuhash/kernels';
import { commonModule } from './common';

/**
 * Appending to the lists buffer one entry at a time (one atomicAdd each); `report_failure` is the
 * failed list's (Hive's failures live in the lists buffer, not a failed list of their own).
 */
export const listsModule = wgslModule(
  'hive.lists',
  /* wgsl */ `
fn push_list(list: u32, entry: u32) {
  let at = atomicAdd(&lists[list], 1u);
  if (at < params.list_cap) { atomicStore(&lists[LIST_HEADER + list * params.list_cap + at], entry); }
}
// Every failure is counted; indices are kept while the list has room (it holds a batch).
fn report_failure(index: u32) { push_list(L_FAILED, index); }
`,
  { requires: [commonModule], needs: ['params', 'lists'] },
);
