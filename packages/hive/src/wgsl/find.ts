import { chunkItem, defineKernel, orderBinding, storage, uniform } from '@gpuhash/core';
import { chunkLoop, composeWgsl, entryPoint, gridModule } from '@gpuhash/kernels';
import { HOME_SLOTS, homeGeometry } from '../split-pointer';
import { commonModuleFor, WORKGROUP_SIZE } from './common';
import { hiveParams } from './params';
import { ONE_WINDOW, type SlotWindows, slotsBinding, slotWindows } from './windows';

/**
 * Finds, read-only and lane by lane: no cooperation, since a lane reads one 32-byte sector where a
 * WCME scan reads a whole bucket per key (WCME measured slower here at every load on an H200).
 * Each lane first reads its key's home in its first bucket (one 32-byte sector: the home's 4 keys
 * and their 4 values) and that bucket's lock word. A key found there, or absent with both its
 * filter bits clear (away and far), is answered after that one round trip (most keys: claims take
 * slots at home first). With its away bit set, a key absent from its home reads the next home
 * (keys and values, one sector), then the two after it, then the other four, in the order claims
 * fill a bucket (\`hv_pick_slot\`); with its far bit set, the second bucket (its home there first,
 * then the whole bucket), and when the stash bit is set too, the stash line. A hit read by keys
 * only then reads its value word. Plain loads of read-only bindings, so nothing here is atomic and
 * the cache serves repeated lines.
 *
 * Shape measured on an H200 (2026-11-22): this inline form beat a version with the rest in a
 * function with early returns (hits at 0.95: 11.7 against 14.2 ms for 2^27 slots), and two keys
 * per lane were slower than one (hits at 0.5: 15.5 G/s on a faster host against 17.6). With the
 * earlier layout (a bucket's keys in one line, its values in the next), reading the home's values
 * with its keys made hits at 0.5 17% faster; here they share the keys' sector.
 *
 * Any home size of HOME_SIZES (variant \`homeSlots\`, the table's HOME_SLOTS by default; the code
 * also reads homes of 16): a home's keys are homeSlots / 4 16-byte words and its values as many
 * after them, read together; with fewer homes the slow path has fewer to read (4 homes: the next,
 * then the two after it; 2: the next one only). Homes of 4 give the WGSL measured above (the text
 * is the same as before the other sizes were added); the others are checked on SwiftShader against
 * a CPU model of the table (twins.checks.ts), not timed.
 *
 * mode 0 (find batches): out_values[i], out_found[i]; with \`ordered\`, the batch is walked in the
 * order \`order\` lists it (@gpuhash/core's window order: tables of more than 2 GiB of slots), each
 * answer at its list position for the gather to move. mode MODE_APPLY: the finds of a mixed batch,
 * run before its other ops (so they see the table as it was before the batch, which the mixed-batch
 * contract allows): out_values holds (value, status) pairs and only ops[i] == OP_FIND are looked up;
 * every entry's pair is written, (0, 0) for the other ops, whose passes write theirs later.
 * Bindings: params, ops, keys, out_values, out_found, counters (read), masks_ro (the meta buffer),
 * slots_v4 (the slots buffer as 16-byte words: a value word is read as its word's component).
 */
export const findKernel = defineKernel({
  name: 'hive.find',
  workgroupSize: WORKGROUP_SIZE,
  variant: { homeSlots: HOME_SLOTS, ordered: false, ...ONE_WINDOW },
  params: hiveParams,
  bindings: (v: SlotWindows & { ordered: boolean }) => ({
    params: uniform(),
    ops: storage('read', 'u32'),
    keys: storage('read', 'u32'),
    out_values: storage('read_write', 'u32'),
    out_found: storage('read_write', 'u32'),
    counters: storage('read', 'u32'),
    masks_ro: storage('read', 'u32'),
    slots_v4: slotsBinding('read', 'vec4<u32>', v),
    ...orderBinding(v.ordered),
  }),
  source: (decls, { homeSlots, ordered, ...windowing }) => {
    const w = homeWords(homeSlots);
    const home = w.readHome('', 'b1', 'h');
    return composeWgsl(
      /* wgsl */ `
${decls}

/** The index (0..3) of key among a home's 4 key words, NONE if absent (a key is stored once). */
fn hv_match4(k: vec4<u32>, key: u32) -> u32 {
  var s = NONE;
  if (k.w == key) { s = 3u; }
  if (k.z == key) { s = 2u; }
  if (k.y == key) { s = 1u; }
  if (k.x == key) { s = 0u; }
  return s;
}

/** Word s (0..3) of a home's 4 words. */
fn hv_pick4(v: vec4<u32>, s: u32) -> u32 {
  return select(select(v.x, v.y, s == 1u), select(v.z, v.w, s == 3u), s >= 2u);
}
${w.helpers}
/** The slot (0..31) of key in bucket b, NONE if absent: the ${w.homes} homes' keys, all ${w.homes * w.words} loads in flight at once. */
fn hv_probe_line(b: u32, key: u32) -> u32 {
${w.probeLine}
}

var<workgroup> wg_stash: u32;

${entryPoint(WORKGROUP_SIZE)} {
  if (lid == 0u) { wg_stash = counters[C_STASH]; }
  let stash_live = workgroupUniformLoad(&wg_stash) != 0u;
  let apply = params.mode == MODE_APPLY;
  ${chunkLoop('params.n', WORKGROUP_SIZE)} {
    // This dispatch covers batch entries aux1 .. aux1 + n - 1 (ordered: in window order, find
    // batches only, its answers at their list positions).
    ${chunkItem(ordered, 'local')}
    let i = params.aux1 + local;
    var key = EMPTY;
    var go = false;
    if (local < params.n && (!apply || ops[i] == OP_FIND)) {
      key = keys[i];
      // Reserved keys (device batches are not validated for finds) are never found.
      go = key < TOMBSTONE;
    }
    let b1 = hv_b1(key);
    let b2 = hv_b2(key);
    // The home first: each lane reads its key's home in b1 (one 32-byte sector with homes of 4: 4
    // keys, then their values) and b1's lock word. Most keys live there, and a key absent from it
    // whose away bit is clear is a miss.
    var at = NONE;
    var value = 0u;
    var known = false;
    var slow = false;
    var spilled = false;
    var stashed = false;
    let h = hv_home(key);
    if (go) {
      ${home.lines.join('\n      ')}
      let word = masks_ro[params.lock_base + b1];
      let s = ${w.match(home.ks)};
      if (s != NONE) {
        at = b1 * 32u + HOME_SLOTS * h + s;
        value = ${w.pick(home.vs, 's')};
        known = true;
      } else {
        let far = (word & hv_far_bit(key)) != 0u;
        slow = hv_may_be_away(word, key);
        spilled = far && b2 != b1;
        stashed = far && stash_live && (word & STASH_BIT) != 0u;
      }
    }
${slowPath(w)}
    if (at != NONE && !known) {
      let vw = hv_vw(at);
      value = hv_pick4(slots_v4[vw / 4u], vw % 4u);
    }
    let found = select(0u, 1u, at != NONE);
    if (apply) {
      // Every entry's pair, the other ops' as (0, 0) for their passes to overwrite: whole sectors,
      // where writing the finds' pairs alone left most sectors of out partly written.
      if (local < params.n) {
        let is_find = ops[i] == OP_FIND;
        out_values[2u * i] = select(0u, value, is_find);
        out_values[2u * i + 1u] = select(0u, found, is_find);
      }
    } else if (local < params.n) {
      out_values[answer_at] = value;
      out_found[answer_at] = found;
    }
  }
}
`,
      { modules: [gridModule, commonModuleFor(homeSlots)], windows: slotWindows(windowing, { slots_v4: 'vec4<u32>' }) },
    );
  },
});

type HomeWords = ReturnType<typeof homeWords>;

/**
 * The WGSL pieces that read homes of \`homeSlots\` slots: a home's keys are \`words\` = homeSlots / 4
 * 16-byte words, its values as many after them. With one word (homes of 4) each piece is the
 * single-word form measured on an H200 (hv_match4, hv_pick4 on the words themselves); with more,
 * hv_match_home and hv_pick_home read them word by word.
 */
function homeWords(homeSlots: number) {
  const { homes } = homeGeometry(homeSlots);
  const words = homeSlots / 4;
  const ts = Array.from({ length: words }, (_, t) => t);
  const plus = (q: string, t: number) => (t === 0 ? q : `${q} + ${t}u`);
  /** Names of a home's key (or value) words: `base` alone for one word, else base0, base1, ... */
  const names = (base: string) => (words === 1 ? [base] : ts.map((t) => `${base}${t}`));
  /** The slot (0..homeSlots-1) of key among key words `ks`, NONE if absent. */
  const match = (ks: readonly string[]) => (words === 1 ? `hv_match4(${ks[0]}, key)` : `hv_match_home(${ks.join(', ')}, key)`);
  /** Word s of value words `vs`. */
  const pick = (vs: readonly string[], s: string) => (words === 1 ? `hv_pick4(${vs[0]}, ${s})` : `hv_pick_home(${vs.join(', ')}, ${s})`);
  /** The key words of home h of bucket b, as loads. */
  const keyLoads = (b: string, h: string) => ts.map((t) => `slots_v4[${plus(`hv_home_v4(${b}, ${h})`, t)}]`);
  /** Home h of bucket b read whole, keys then values, into q<x>, k<x>..., v<x>...: the lines, and the names. */
  const readHome = (x: string, b: string, h: string) => {
    const ks = names(`k${x}`);
    const vs = names(`v${x}`);
    const lines = [
      `let q${x} = hv_home_v4(${b}, ${h});`,
      ...ks.map((k, t) => `let ${k} = slots_v4[${plus(`q${x}`, t)}];`),
      ...vs.map((v, t) => `let ${v} = slots_v4[q${x} + ${words + t}u];`),
    ];
    return { lines, ks, vs };
  };
  const decl = (ns: readonly string[]) => ns.map((n) => `${n}: vec4<u32>`).join(', ');
  /** Names of home j's key words where several homes are read at once: k<j>, or k<j>_<t>. */
  const homeNames = (j: number) => (words === 1 ? [`k${j}`] : ts.map((t) => `k${j}_${t}`));
  /** Lets loading homes js of bucket b (home j at `h(j)`) into homeNames(j). */
  const loadHomes = (b: string, js: readonly number[], h: (j: number) => string) =>
    js.map((j) =>
      keyLoads(b, h(j))
        .map((e, t) => `let ${homeNames(j)[t]} = ${e};`)
        .join(' '),
    );
  /** hv_match_pair over homes j, j + 1 as loaded by loadHomes, the pair's first home at `h`. */
  const pair = (j: number, h: string) => `hv_match_pair(${[...homeNames(j), ...homeNames(j + 1)].join(', ')}, ${h}, key)`;

  const multiWord =
    words === 1
      ? ''
      : /* wgsl */ `
/** The index (0..HOME_SLOTS-1) of key among a home's key words, NONE if absent (a key is stored once). */
fn hv_match_home(${decl(names('k'))}, key: u32) -> u32 {
  var s = NONE;
${ts
  .slice()
  .reverse()
  .map((t) => `  let m${t} = hv_match4(k${t}, key);\n  if (m${t} != NONE) { s = ${t === 0 ? '' : `${4 * t}u + `}m${t}; }`)
  .join('\n')}
  return s;
}

/** Word s (0..HOME_SLOTS-1) of a home's value words. */
fn hv_pick_home(${decl(names('v'))}, s: u32) -> u32 {
  let w = s / 4u;
  return hv_pick4(${ts.slice(1).reduce((acc, t) => `select(${acc}, v${t}, w == ${t}u)`, 'v0')}, s % 4u);
}
`;
  const pairA = words === 1 ? ['k0'] : ts.map((t) => `a${t}`);
  const pairB = words === 1 ? ['k1'] : ts.map((t) => `b${t}`);
  const helpers = /* wgsl */ `${multiWord}
/** Bucket b as 16-byte words: the index of home j's keys (its values are the next ${words === 1 ? 'word' : `${words} words`}). */
fn hv_home_v4(b: u32, j: u32) -> u32 { return b * 16u + ${2 * words}u * (j & ${homes - 1}u); }

/** The first of key's slots among homes h, h + 1 (mod ${homes}) given their key words, as ${homeSlots} h' + t; NONE if absent. */
fn hv_match_pair(${decl([...pairA, ...pairB])}, h: u32, key: u32) -> u32 {
  let a = ${match(pairA)};
  if (a != NONE) { return ${homeSlots}u * (h & ${homes - 1}u) + a; }
  let b = ${match(pairB)};
  if (b != NONE) { return ${homeSlots}u * ((h + 1u) & ${homes - 1}u) + b; }
  return NONE;
}
`;
  // The whole bucket: every home's keys loaded first, then matched by pairs from the last, so the
  // first pair's match wins.
  const all = Array.from({ length: homes }, (_, j) => j);
  const pairsDown = all.filter((j) => j % 2 === 0).reverse();
  const [lastPair, ...lowerPairs] = pairsDown as [number, ...number[]];
  const probeLine = [
    ...all.filter((j) => j % 2 === 0).map((j) => `  ${loadHomes('b', [j, j + 1], (i) => `${i}u`).join(' ')}`),
    `  var s = ${pair(lastPair, `${lastPair}u`)};`,
    ...lowerPairs.map((j, n) => {
      const v = String.fromCharCode('c'.charCodeAt(0) + n);
      return `  let ${v} = ${pair(j, `${j}u`)};\n  if (${v} != NONE) { s = ${v}; }`;
    }),
    '  return s;',
  ].join('\n');
  return { homes, words, helpers, probeLine, match, pick, readHome, keyLoads, loadHomes, pair };
}

/**
 * Past the home, lane by lane: with the away bit, the next home of b1 with its values (claims
 * overflow there first), then the two after it, then the other four (as many as there are); then,
 * with the far bit and the key not yet found, the key's home in b2 with its values, then all of b2
 * (hv_probe_line); then the stash line when flagged. With the earlier layout (homes of 8 slots,
 * keys and values in separate lines), the next home alone first made hits at load 0.95 3% faster,
 * misses the same, and reading b2 only after b1 (rather than with it) made hits at 0.95 6% faster
 * and misses 5% slower (H200, 2026-11-22, perf-hive).
 */
function slowPath(w: HomeWords): string {
  const next = w.readHome('a', 'b1', 'h + 1u');
  const second = w.readHome('e', 'b2', 'h');
  const hPlus = (j: number) => `h + ${j}u`;
  // The homes after the next one: h + 2, h + 3, then h + 4 .. h + 7 (8 homes).
  let rest = '';
  if (w.homes >= 4) {
    const pairOfLoads = `hv_match_pair(${[...w.keyLoads('b1', 'h + 2u'), ...w.keyLoads('b1', 'h + 3u')].join(', ')}, h + 2u, key)`;
    const far =
      w.homes >= 8
        ? `
          if (in1 == NONE) {
            ${w.loadHomes('b1', [4, 5], hPlus).join(' ')}
            ${w.loadHomes('b1', [6, 7], hPlus).join(' ')}
            in1 = ${w.pair(4, 'h + 4u')};
            let far6 = ${w.pair(6, 'h + 6u')};
            if (in1 == NONE) { in1 = far6; }
          }`
        : '';
    rest = ` else {
          in1 = ${pairOfLoads};${far}
        }`;
  }
  return /* wgsl */ `
    if (slow || spilled || stashed) {
      var in1 = NONE;
      if (slow) {
        // Its values too, as at home: most keys away from home are here.
        ${next.lines.join('\n        ')}
        let sa = ${w.match(next.ks)};
        if (sa != NONE) {
          in1 = HOME_SLOTS * ((h + 1u) & ${w.homes - 1}u) + sa;
          value = ${w.pick(next.vs, 'sa')};
          known = true;
        }${rest}
      }
      // With its far bit set: in b2, the key's home first too (claims there take it first), then
      // the whole bucket.
      var in2 = NONE;
      if (spilled && in1 == NONE) {
        ${second.lines.join('\n        ')}
        let se = ${w.match(second.ks)};
        if (se != NONE) {
          in2 = HOME_SLOTS * h + se;
          value = ${w.pick(second.vs, 'se')};
          known = true;
        } else {
          // The whole bucket (its home again, a sector just read).
          in2 = hv_probe_line(b2, key);
        }
      }
      if (in1 != NONE) {
        at = b1 * 32u + in1;
      } else if (in2 != NONE) {
        at = b2 * 32u + in2;
      } else if (stashed) {
        let line = hv_stash_bucket(key);
        let ins = hv_probe_line(line, key);
        if (ins != NONE) { at = line * 32u + ins; }
      }
    }`;
}
