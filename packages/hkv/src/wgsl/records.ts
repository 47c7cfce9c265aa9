import { type BindingsLayout, storage } from '@gpuhash/core';

/**
 * Where the slot records live: a slot's key and score side by side in 16 bytes (key lo, key hi,
 * score lo, score hi), `recordSlots` slots per buffer. An insert writes both in one 32-byte sector,
 * and an update reads the key and rewrites the score there too; in two arrays they took two random
 * sectors. A table past one binding's records (2^26 slots at 2^31 - 4 bytes) splits them in two.
 */
export interface RecordVariant {
  /** Record buffers, bound as `rec0`, `rec1` (at most MAX_RECORD_PARTS). */
  recordParts: number;
  /** Slots per record buffer, a power of two. */
  recordSlots: number;
}

/**
 * The record buffers' bindings: arrays of `atomic<u32>` (kernels that claim slots and read keys
 * other invocations write) or of `vec2<u32>` (key at 2r, score at 2r + 1: kernels whose dispatch
 * changes no key).
 */
export function recordBindings(v: RecordVariant, access: 'read' | 'read_write', atomic: boolean, prefix = 'rec'): BindingsLayout {
  const out: Record<string, ReturnType<typeof storage>> = {};
  for (let p = 0; p < v.recordParts; p++) out[`${prefix}${p}`] = storage(access, atomic ? 'atomic<u32>' : 'vec2<u32>');
  return out;
}

/**
 * `fn NAMEkey_at(g) -> vec2<u32>` and `NAMEscore_at(g)`, and when writable `NAMEset_key(g, k)` and
 * `NAMEset_score(g, s)`, over the record buffers `PREFIX0..`. WGSL cannot index bindings, so slot
 * g's buffer is picked by a branch on g (one compare; both halves share the code).
 */
export function recordAccessors(v: RecordVariant, atomic: boolean, writable: boolean, prefix = 'rec', name = ''): string {
  if (v.recordParts < 1 || v.recordParts > 2) throw new RangeError(`recordAccessors: ${v.recordParts} record buffers (1 or 2)`);
  // A load returns from the first buffer's branch, so the second needs no else.
  const pick = (body: (buf: string, r: string) => string, returns = false) =>
    v.recordParts === 1
      ? body(`${prefix}0`, 'g')
      : `if (g < ${v.recordSlots}u) { ${body(`${prefix}0`, 'g')} }${returns ? ' ' : ' else { '}${body(`${prefix}1`, `(g - ${v.recordSlots}u)`)}${returns ? '' : ' }'}`;
  // word w (0..3) of the record: atomic words, or element e (0 key, 1 score) of vec2 pairs.
  const load = (w: 0 | 2) =>
    atomic
      ? (b: string, r: string) => `return vec2<u32>(atomicLoad(&${b}[4u * ${r} + ${w}u]), atomicLoad(&${b}[4u * ${r} + ${w + 1}u]));`
      : (b: string, r: string) => `return ${b}[2u * ${r} + ${w / 2}u];`;
  const store = (w: 0 | 2, x: string) =>
    atomic
      ? (b: string, r: string) => `atomicStore(&${b}[4u * ${r} + ${w}u], ${x}.x); atomicStore(&${b}[4u * ${r} + ${w + 1}u], ${x}.y);`
      : (b: string, r: string) => `${b}[2u * ${r} + ${w / 2}u] = ${x};`;
  let out = `fn ${name}key_at(g: u32) -> vec2<u32> { ${pick(load(0), true)} }\n`;
  out += `fn ${name}score_at(g: u32) -> vec2<u32> { ${pick(load(2), true)} }\n`;
  if (writable) {
    out += `fn ${name}set_key(g: u32, k: vec2<u32>) { ${pick(store(0, 'k'))} }\n`;
    out += `fn ${name}set_score(g: u32, s: vec2<u32>) { ${pick(store(2, 's'))} }\n`;
  }
  return out;
}
