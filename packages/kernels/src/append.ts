import { type WgslModule, wgslModule } from './compose';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `append_LIST(want, value, lid)`: appends `value` for every invocation whose `want` is true to the
 * kernel's `LIST: array<atomic<u32>>` binding (word 0 counts, items from word 1; items past the
 * end are counted, not written), with one global atomic per workgroup instead of one per item: a
 * batch whose items all append to one counter word would otherwise serialise on it. Call it from
 * every invocation of the workgroup in uniform control flow (it has barriers), e.g. inside
 * `chunkLoop`. The order of items within a workgroup's run is unspecified.
 */
export function workgroupAppendModule(list: string): WgslModule {
  if (!IDENTIFIER.test(list)) throw new RangeError(`workgroupAppendModule: '${list}' is not an identifier`);
  return wgslModule(
    `kernels.append.${list}`,
    /* wgsl */ `
var<workgroup> ${list}_wg_count: atomic<u32>;
var<workgroup> ${list}_wg_base: u32;
fn append_${list}(want: bool, value: u32, lid: u32) {
  var at = 0u;
  if (want) { at = atomicAdd(&${list}_wg_count, 1u); }
  workgroupBarrier();
  if (lid == 0u) {
    let c = atomicLoad(&${list}_wg_count);
    if (c != 0u) { ${list}_wg_base = atomicAdd(&${list}[0], c); }
    atomicStore(&${list}_wg_count, 0u);
  }
  let base = workgroupUniformLoad(&${list}_wg_base);
  if (want && 1u + base + at < arrayLength(&${list})) { atomicStore(&${list}[1u + base + at], value); }
}`,
    { needs: [list] },
  );
}
