import type { Gpu, Kernel } from '@gpuhash/core';
import { type CheckSuite, defineChecks, expectSameArrays, type GpuCheck, type Rng, runKernelOnArrays } from '@gpuhash/testing';
import { atomicHelpers } from '../src/atomics';
import { composeWgsl } from '../src/compose';
import { countOneBits } from '../src/cooperative';
import { gridModule } from '../src/grid';

const WG = 64;
const NONE = 0xffffffff;

/** A kernel over `words: array<atomic<u32>>` at binding 1, params at 0, `body` run per invocation i < n. */
function atomicsKernel(name: string, bindings: string, body: string): Kernel {
  const main = /* wgsl */ `
struct Params { n: u32, a: u32, b: u32, mode: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> words: array<atomic<u32>>;
${bindings}

@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = grid_thread(wid, nwg, lid, ${WG}u);
  if (i >= params.n) { return; }
${body}
}
`;
  return {
    name: `test.atomics.${name}`,
    workgroupSize: WG,
    source: composeWgsl(main, { modules: [gridModule, atomicHelpers('words', 'w')] }),
  };
}

/**
 * Claims the lowest free allowed bit, trying every word from i % nwords on (params.a = nwords);
 * mode 1 releases the bit held in out[i] instead; mode 2 claims, then (odd i) releases and claims again.
 */
const claimKernel = atomicsKernel(
  'claim',
  /* wgsl */ `
@group(0) @binding(2) var<storage, read> allowed: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<storage, read_write> ok: array<u32>;

fn claim_any(i: u32) -> u32 {
  for (var k = 0u; k < params.a; k++) {
    let w = (i + k) % params.a;
    let bit = w_claim_lowest(w, allowed[w]);
    if (bit >= 0i) { return w * 32u + u32(bit); }
  }
  return ${NONE}u;
}`,
  /* wgsl */ `
  if (params.mode == 1u) {
    let held = out[i];
    if (held != ${NONE}u && ok[i] == 1u) {
      ok[i] = select(2u, 3u, w_release_bit(held / 32u, held % 32u));
      out[i] = ${NONE}u;
    }
    return;
  }
  var got = claim_any(i);
  if (params.mode == 2u && got != ${NONE}u && (i & 1u) == 1u) {
    ok[i] = select(2u, 1u, w_release_bit(got / 32u, got % 32u));
    got = claim_any(i);
  }
  out[i] = got;`,
);

/** Every invocation does one strong CAS 0 -> i+1 on word i % a, then a CAS-loop increment of word (i % b) + a. */
const casKernel = atomicsKernel(
  'cas',
  /* wgsl */ `
@group(0) @binding(2) var<storage, read_write> out: array<u32>;`,
  /* wgsl */ `
  let r = w_cas(i % params.a, 0u, i + 1u);
  out[i * 3u] = r.old_value;
  out[i * 3u + 1u] = select(0u, 1u, r.done);
  let c = params.a + i % params.b;
  var cur = w_load(c);
  loop {
    let s = w_cas(c, cur, cur + 1u);
    if (s.done) { break; }
    cur = s.old_value;
  }
  out[i * 3u + 2u] = cur;`,
);

/** Every invocation reserves delta[i] units of word i % params.b under the bound params.a. */
const boundedKernel = atomicsKernel(
  'bounded',
  /* wgsl */ `
@group(0) @binding(2) var<storage, read> delta: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;`,
  /* wgsl */ `
  let r = w_add_bounded(i % params.b, delta[i], params.a);
  out[i * 2u] = r.old_value;
  out[i * 2u + 1u] = select(0u, 1u, r.done);`,
);

function invocations(scale: number): number {
  return 4096 * scale;
}

/** Per word: the bits that start taken (random) and the bits a claim may take. */
function bitmaps(rng: Rng, nwords: number, takenOneIn: number): { initial: Uint32Array; allowed: Uint32Array } {
  const initial = new Uint32Array(nwords);
  const allowed = new Uint32Array(nwords);
  for (let w = 0; w < nwords; w++) {
    for (let b = 0; b < 32; b++) if (rng.below(takenOneIn) === 0) initial[w]! |= 1 << b;
    // Mostly all bits allowed; some words allow a random subset, one allows nothing.
    allowed[w] = w === 1 ? 0 : rng.below(3) === 0 ? rng.u32() : NONE;
  }
  return { initial, allowed };
}

/** Asserts the claimed bits are distinct, were free and allowed, and are exactly what words gained. */
function checkClaims(what: string, claims: Uint32Array, initial: Uint32Array, allowed: Uint32Array, final: Uint32Array): number {
  const gained = initial.slice();
  let count = 0;
  claims.forEach((c, i) => {
    if (c === NONE) return;
    const w = Math.floor(c / 32);
    const m = (1 << (c % 32)) >>> 0;
    if (w >= initial.length) throw new Error(`${what}: invocation ${i} claimed bit ${c}, past the words`);
    if ((gained[w]! & m) !== 0) throw new Error(`${what}: bit ${c} (invocation ${i}) was already taken or claimed twice`);
    if ((allowed[w]! & m) === 0) throw new Error(`${what}: bit ${c} (invocation ${i}) is not allowed`);
    gained[w]! |= m;
    count++;
  });
  expectSameArrays(`${what}: final words = initial | claimed bits`, final, gained);
  return count;
}

async function runClaims(gpu: Gpu, rng: Rng, n: number, nwords: number, takenOneIn: number, mode: 0 | 2) {
  const { initial, allowed } = bitmaps(rng, nwords, takenOneIn);
  const [, final, , out, ok] = await runKernelOnArrays(gpu, {
    kernel: claimKernel,
    inputs: [new Uint32Array([n, nwords, 0, mode]), initial, allowed, new Uint32Array(n), new Uint32Array(n)],
    uniforms: [0],
    invocations: n,
  });
  return { initial, allowed, final: final!, out: out!, ok: ok! };
}

const claimOnce: GpuCheck = {
  name: 'claim_lowest: under contention every free allowed bit is claimed exactly once',
  async run({ gpu, rng, scale }) {
    const n = invocations(scale);
    // Few words: far more claimants than bits, so every free allowed bit must go, once each.
    for (const nwords of [1, 4, 8]) {
      const { initial, allowed, final, out } = await runClaims(gpu, rng, n, nwords, 4, 0);
      const free = [...initial].reduce((s, x, w) => s + countOneBits(allowed[w]! & ~x), 0);
      const claimed = checkClaims(`${nwords} words`, out, initial, allowed, final);
      if (claimed !== Math.min(free, n)) throw new Error(`${nwords} words: ${claimed} bits claimed, ${free} were free`);
    }
    // Many words, more free bits than claimants: every claimant must succeed.
    const nwords = Math.ceil(n / 12);
    const { initial, allowed, final, out } = await runClaims(gpu, rng, n, nwords, 4, 0);
    const claimed = checkClaims(`${nwords} words`, out, initial, allowed, final);
    const free = [...initial].reduce((s, x, w) => s + countOneBits(allowed[w]! & ~x), 0);
    if (claimed !== Math.min(n, free)) throw new Error(`${nwords} words: ${claimed} of ${n} claims succeeded with ${free} bits free`);
  },
};

const releaseReclaim: GpuCheck = {
  name: 'release_bit then claim_lowest: released bits are reclaimed exactly once',
  async run({ gpu, rng, scale }) {
    const n = invocations(scale);
    const nwords = 4;
    const { initial, allowed } = bitmaps(rng, nwords, 3);
    const params = (mode: number) => new Uint32Array([n, nwords, 0, mode]);
    await gpu.run('test.atomics.release-reclaim', async () => {
      const words = gpu.upload(initial);
      const allowedBuf = gpu.upload(allowed);
      const out = gpu.upload(new Uint32Array(n));
      // ok[i] = 1 marks the holders that will release: about a third of them.
      const releasers = new Uint32Array(n).map(() => (rng.below(3) === 0 ? 1 : 0));
      const ok = gpu.upload(releasers);
      const dispatch = (mode: number) => {
        const u = gpu.uniforms(params(mode));
        gpu.dispatch(claimKernel, { bindings: [u, words.buffer, allowedBuf.buffer, out.buffer, ok.buffer], invocations: n });
        gpu.pool.release(u);
      };
      const read = async (a: typeof out) => (await gpu.download(a)) as Uint32Array;
      dispatch(0);
      const held = await read(out);
      const afterClaim = await read(words);
      checkClaims('first claims', held, initial, allowed, afterClaim);
      // n far exceeds the bits, so every free allowed bit is now taken.
      expectSameArrays(
        'words after the first claims',
        afterClaim,
        initial.map((x, w) => (x | allowed[w]!) >>> 0),
      );
      dispatch(1);
      const okAfter = await read(ok);
      const afterRelease = await read(words);
      const released = afterClaim.slice();
      const expectedOk = releasers.slice();
      held.forEach((c, i) => {
        if (c === NONE || releasers[i] !== 1) return;
        released[Math.floor(c / 32)]! &= ~(1 << (c % 32));
        expectedOk[i] = 3;
      });
      expectSameArrays('release_bit returned true for each held bit', okAfter, expectedOk);
      expectSameArrays('words after release', afterRelease, released);
      // A second round of n claimants: the released bits are the only free ones.
      dispatch(0);
      const reclaimed = await read(out);
      const final = await read(words);
      const count = checkClaims('reclaims', reclaimed, afterRelease, allowed, final);
      const releasedCount = expectedOk.filter((x) => x === 3).length;
      if (count !== releasedCount) throw new Error(`${count} bits reclaimed, ${releasedCount} were released`);
      for (const b of [words, allowedBuf, out, ok]) b.destroy();
    });
  },
};

const churn: GpuCheck = {
  name: 'claim, release and claim again concurrently: the bits held at the end are distinct and are the words',
  async run({ gpu, rng, scale }) {
    const n = invocations(scale);
    for (const nwords of [2, 16]) {
      const { initial, allowed, final, out, ok } = await runClaims(gpu, rng, n, nwords, 4, 2);
      checkClaims(`churn over ${nwords} words`, out, initial, allowed, final);
      // An odd invocation that claimed a bit must have found it set when releasing it.
      ok.forEach((v, i) => {
        if (v > 1) throw new Error(`invocation ${i}: release_bit found the bit it had claimed clear`);
      });
    }
  },
};

const casChecks: GpuCheck = {
  name: 'cas is strong (one winner per word, every loser sees its value) and a CAS-loop counter counts exactly',
  async run({ gpu, scale }) {
    const n = invocations(scale);
    // About 1,400 invocations per counter: a CAS loop under contention costs O(contenders^2) attempts.
    const [a, b] = [7, 3 * scale];
    const [, words, out] = await runKernelOnArrays(gpu, {
      kernel: casKernel,
      inputs: [new Uint32Array([n, a, b, 0]), new Uint32Array(a + b), new Uint32Array(n * 3)],
      uniforms: [0],
      invocations: n,
    });
    const winners = new Array<number>(a).fill(-1);
    const seen = Array.from({ length: b }, () => new Set<number>());
    for (let i = 0; i < n; i++) {
      const [old, done, count] = [out![i * 3]!, out![i * 3 + 1]!, out![i * 3 + 2]!];
      const w = i % a;
      if (done === 1) {
        if (winners[w] !== -1) throw new Error(`word ${w}: invocations ${winners[w]} and ${i} both won`);
        if (old !== 0) throw new Error(`word ${w}: winner ${i} saw ${old}`);
        winners[w] = i;
      } else if (old === 0) {
        throw new Error(`word ${w}: invocation ${i} failed although it saw the expected 0 (a spurious failure)`);
      }
      const c = seen[i % b]!;
      if (c.has(count)) throw new Error(`counter ${i % b}: two invocations incremented from ${count}`);
      c.add(count);
    }
    const expectedWords = new Uint32Array(a + b);
    winners.forEach((win, w) => {
      if (win < 0) throw new Error(`word ${w}: no winner`);
      expectedWords[w] = win + 1;
    });
    for (let c = 0; c < b; c++) expectedWords[a + c] = Math.ceil((n - c) / b);
    expectSameArrays('words after cas', words!, expectedWords);
    const losersOld = new Uint32Array(n).map((_, i) => (out![i * 3 + 1] === 1 ? 0 : out![i * 3]!));
    const expectedOld = new Uint32Array(n).map((_, i) => (out![i * 3 + 1] === 1 ? 0 : expectedWords[i % a]!));
    expectSameArrays('losers saw the winner', losersOld, expectedOld);
  },
};

const bounded: GpuCheck = {
  name: 'add_bounded: reservations tile [0, final) without overlap and never pass the bound',
  async run({ gpu, rng, scale }) {
    const n = invocations(scale);
    const nwords = scale; // 4,096 contenders per word at any scale
    const delta = new Uint32Array(n).map(() => 1 + rng.below(4));
    const totals = new Array<number>(nwords).fill(0);
    for (let i = 0; i < n; i++) totals[i % nwords]! += delta[i]!;
    const least = Math.min(...totals);
    for (const bound of [Math.floor(least / 3), Math.max(...totals), 0]) {
      const [, words, , out] = await runKernelOnArrays(gpu, {
        kernel: boundedKernel,
        inputs: [new Uint32Array([n, bound, nwords, 0]), new Uint32Array(nwords), delta, new Uint32Array(n * 2)],
        uniforms: [0],
        invocations: n,
      });
      const spans = Array.from({ length: nwords }, (): Array<[number, number]> => []);
      for (let i = 0; i < n; i++) {
        const [old, done] = [out![i * 2]!, out![i * 2 + 1]!];
        if (done === 1) spans[i % nwords]!.push([old, old + delta[i]!]);
        else if (old + delta[i]! <= bound) throw new Error(`bound ${bound}: invocation ${i} gave up at ${old} with ${delta[i]} to add`);
      }
      spans.forEach((list, w) => {
        const final = words![w]!;
        if (final > bound) throw new Error(`bound ${bound}: word ${w} reached ${final}`);
        list.sort((x, y) => x[0] - y[0]);
        let end = 0;
        for (const [s, e] of list) {
          if (s !== end) throw new Error(`bound ${bound}, word ${w}: reservations leave a gap or overlap at ${end}..${s}`);
          end = e;
        }
        if (end !== final) throw new Error(`bound ${bound}, word ${w}: reservations end at ${end}, the word at ${final}`);
        if (bound >= totals[w]! && final !== totals[w])
          throw new Error(`bound ${bound}, word ${w}: only ${final} of ${totals[w]} reserved`);
      });
    }
  },
};

/** Atomics helpers under contention: many invocations on few words. */
export const atomicsChecks: CheckSuite = defineChecks('kernels/atomics', [claimOnce, releaseReclaim, churn, casChecks, bounded]);
