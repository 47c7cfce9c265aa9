import { type WgslModule, wgslModule } from './compose';

/**
 * Per-invocation tallies, flushed once per workgroup: each invocation counts in private memory
 * (`count(T_ADDED, 1u)`), `flush_tallies(lid)` sums them in workgroup memory and one invocation per
 * tally applies the workgroup's total `v` to global counters. A global atomic per item on one
 * counter word would serialise the whole batch.
 */

/** `addedKeys` -> `T_ADDED_KEYS`. */
export function tallyConstant(name: string): string {
  return `T_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

/**
 * A tallies module. `tallies` maps each tally's name (camelCase; its index constant is
 * `T_SNAKE_CASE`, in the record's order) to the WGSL statements that apply the workgroup total
 * `v` (a u32, never 0) to the kernel's counters, e.g. `atomicAdd(&counters[0], v);`.
 * `flush_tallies(lid)` has a barrier: call it from every invocation, in uniform control flow, in
 * workgroups of at least as many invocations as there are tallies. `needs` names what the
 * statements use (e.g. `counters`).
 */
export function workgroupTalliesModule(
  name: string,
  tallies: Readonly<Record<string, string>>,
  deps: { requires?: readonly WgslModule[]; needs?: readonly string[] } = {},
): WgslModule {
  const entries = Object.entries(tallies);
  if (entries.length === 0) throw new RangeError(`workgroupTalliesModule '${name}': give at least one tally`);
  const n = entries.length;
  const constants = entries.map(([k], i) => `const ${tallyConstant(k)}: u32 = ${i}u;`).join('\n');
  const cases = entries.map(([, apply], i) => `        ${i === n - 1 ? 'default' : `case ${i}u`}: { ${apply.trim()} }`).join('\n');
  return wgslModule(
    name,
    /* wgsl */ `
${constants}
var<private> tally: array<u32, ${n}>;
var<workgroup> wg_tally: array<atomic<u32>, ${n}>;

fn count(t: u32, v: u32) { tally[t] += v; }

fn flush_tallies(lid: u32) {
  for (var t = 0u; t < ${n}u; t++) {
    if (tally[t] != 0u) { atomicAdd(&wg_tally[t], tally[t]); }
  }
  workgroupBarrier();
  if (lid < ${n}u) {
    let v = atomicLoad(&wg_tally[lid]);
    if (v != 0u) {
      switch lid {
${cases}
      }
    }
  }
}`,
    { requires: deps.requires ?? [], needs: deps.needs ?? [] },
  );
}
