import { type WgslModule, wgslModule } from './compose';

/** The result type of the compare-exchange helpers, shared by every atomicHelpers module. */
export const atomicResultModule = wgslModule(
  'kernels.atomics.result',
  /* wgsl */ `
/** old_value: the word before the call; done: whether this call changed it. */
struct AtomicResult { old_value: u32, done: bool }
`,
);

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Helpers over a `var<storage, read_write> <arrayName>: array<atomic<u32>>` that the kernel
 * declares itself (WGSL cannot portably pass storage pointers to functions, so the functions name
 * the array). One module per array; its functions are prefixed `<prefix>_`:
 *
 * - `<p>_load(i) -> u32`
 * - `<p>_cas(i, expected, desired) -> AtomicResult`: a strong compare-exchange; it retries the
 *   spurious failures `atomicCompareExchangeWeak` may report (failed, yet old == expected), so
 *   `done == (old_value == expected)`.
 * - `<p>_claim_bit(i, bit) -> bool`: sets the bit; true when this call set it.
 * - `<p>_release_bit(i, bit) -> bool`: clears the bit; true when it was set.
 * - `<p>_claim_lowest(i, allowed) -> i32`: sets the lowest bit that is clear in word i and set in
 *   `allowed`; its index, or -1 when none is free. Retries under contention with atomicOr, so a
 *   call only fails when it saw every allowed bit taken.
 * - `<p>_add_bounded(i, delta, bound) -> AtomicResult`: adds delta unless the sum would pass
 *   `bound`; an exact reservation (the word never exceeds bound, even transiently).
 *
 * All are relaxed atomics (WGSL has no stronger order): they order nothing but the word itself.
 */
export function atomicHelpers(arrayName: string, prefix: string = arrayName): WgslModule {
  if (!IDENTIFIER.test(arrayName)) throw new Error(`atomicHelpers: '${arrayName}' is not a WGSL identifier`);
  if (!IDENTIFIER.test(prefix)) throw new Error(`atomicHelpers: prefix '${prefix}' is not a WGSL identifier`);
  const a = arrayName;
  const p = prefix;
  return wgslModule(
    `kernels.atomics.${a}.${p}`,
    /* wgsl */ `
fn ${p}_load(i: u32) -> u32 { return atomicLoad(&${a}[i]); }

fn ${p}_cas(i: u32, expected: u32, desired: u32) -> AtomicResult {
  loop {
    let r = atomicCompareExchangeWeak(&${a}[i], expected, desired);
    if (r.exchanged || r.old_value != expected) { return AtomicResult(r.old_value, r.exchanged); }
  }
}

fn ${p}_claim_bit(i: u32, bit: u32) -> bool {
  let m = 1u << bit;
  return (atomicOr(&${a}[i], m) & m) == 0u;
}

fn ${p}_release_bit(i: u32, bit: u32) -> bool {
  let m = 1u << bit;
  return (atomicAnd(&${a}[i], ~m) & m) != 0u;
}

fn ${p}_claim_lowest(i: u32, allowed: u32) -> i32 {
  var seen = atomicLoad(&${a}[i]);
  loop {
    let free = allowed & ~seen;
    if (free == 0u) { return -1i; }
    let bit = firstTrailingBit(free);
    let m = 1u << bit;
    // atomicOr, not a CAS: a concurrent change to other bits cannot make this attempt fail.
    let old = atomicOr(&${a}[i], m);
    if ((old & m) == 0u) { return i32(bit); }
    seen = old;
  }
}

fn ${p}_add_bounded(i: u32, delta: u32, bound: u32) -> AtomicResult {
  var seen = atomicLoad(&${a}[i]);
  loop {
    if (delta > bound || seen > bound - delta) { return AtomicResult(seen, false); }
    let r = atomicCompareExchangeWeak(&${a}[i], seen, seen + delta);
    if (r.exchanged) { return AtomicResult(seen, true); }
    seen = r.old_value;
  }
}
`,
    [atomicResultModule],
  );
}

/** Result of the CPU twins of `<p>_cas` and `<p>_add_bounded`. */
export interface AtomicResult {
  oldValue: number;
  done: boolean;
}

/** CPU twin of `<p>_cas` (sequential). */
export function cpuCas(words: Uint32Array, i: number, expected: number, desired: number): AtomicResult {
  const old = words[i] as number;
  const done = old === expected >>> 0;
  if (done) words[i] = desired;
  return { oldValue: old, done };
}

/** CPU twin of `<p>_claim_bit`. */
export function cpuClaimBit(words: Uint32Array, i: number, bit: number): boolean {
  const m = (1 << bit) >>> 0;
  const old = words[i] as number;
  words[i] = old | m;
  return (old & m) === 0;
}

/** CPU twin of `<p>_release_bit`. */
export function cpuReleaseBit(words: Uint32Array, i: number, bit: number): boolean {
  const m = (1 << bit) >>> 0;
  const old = words[i] as number;
  words[i] = old & ~m;
  return (old & m) !== 0;
}

/** The lowest bit set in `allowed` and clear in `word`, or -1. */
export function lowestFreeBit(word: number, allowed: number): number {
  const free = (allowed & ~word) >>> 0;
  return free === 0 ? -1 : 31 - Math.clz32(free & -free);
}

/** CPU twin of `<p>_claim_lowest`. */
export function cpuClaimLowest(words: Uint32Array, i: number, allowed: number): number {
  const bit = lowestFreeBit(words[i] as number, allowed);
  if (bit >= 0) words[i] = (words[i] as number) | (1 << bit);
  return bit;
}

/** CPU twin of `<p>_add_bounded`. */
export function cpuAddBounded(words: Uint32Array, i: number, delta: number, bound: number): AtomicResult {
  const old = words[i] as number;
  const done = delta >>> 0 <= bound >>> 0 && old <= (bound >>> 0) - (delta >>> 0);
  if (done) words[i] = old + delta;
  return { oldValue: old, done };
}
