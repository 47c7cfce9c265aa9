import type { Kernel } from '@gpuhash/core';
import { composeWgsl, gridModule, wgslModule } from '@gpuhash/kernels';
import { commonModule, WORKGROUP_SIZE } from './common';
import { cachedKernel, entryPoint, gridLoop } from './kernel-cache';

/**
 * The bulk build's partition of a batch by region (`REGION_BUCKETS` buckets, by the key's first
 * bucket), in two passes of a radix partition, every rank taken in workgroup memory. The first cut
 * counted and placed each key with an atomic on its region's global counter: 2^17 counters at 2^27
 * slots, about a thousand keys on each, and the placing pass, which must wait for its atomic's
 * answer, was a third of a build to load 0.95 (5.5 of 18.5 ms on an H200).
 *   1. by digit (region / DIGIT_REGIONS): each workgroup counts its tile of keys per digit
 *      (histogram1), the counts are scanned digit-major, and the workgroup writes its tile's
 *      records (key, value, batch index) to its slots of each digit (scatter1);
 *   2. the plan (one workgroup) cuts each digit's records into chunks of a tile;
 *   3. by region within the digit: each chunk counts per region (histogram2), the counts are
 *      scanned (digit, region, chunk)-major, which is region order, and the chunk writes its records
 *      to its slots of each region (scatter2);
 *   4. bounds: each region's end offset, for the build.
 * Reserved keys are not partitioned: histogram1 puts them in the spill, for pass A to report.
 */
export const REGION_BUCKETS = 32;
/** Regions per digit of the first pass (a workgroup counts them in workgroup memory). */
export const DIGIT_REGIONS = 512;
/** Most digits: regions of up to 2^19 (2^29 slots; one binding holds fewer). */
export const MAX_DIGITS = 1024;
/** Tiles (keys a workgroup partitions at once), largest first: a tile's records are staged in workgroup memory. */
const TILES = [2048, 1024] as const;
export type Tile = (typeof TILES)[number];
/** Workgroup memory of a scatter: the staged records, and per digit a count, a local and a global offset, and the scan's partials. */
export function partitionWorkgroupBytes(tile: Tile): number {
  return 16 * tile + 3 * 4 * MAX_DIGITS + 4 * WORKGROUP_SIZE;
}
/** The largest tile whose scatter fits the device's workgroup memory, or undefined. */
export function partitionTile(maxWorkgroupBytes: number): Tile | undefined {
  return TILES.find((t) => partitionWorkgroupBytes(t) <= maxWorkgroupBytes);
}

/** Words of the plan: a digit's first record (D + 1, the last is the total), chunks (D), first chunk (D + 1), then each chunk's digit. */
export function planWords(digits: number, maxChunks: number): number {
  return 3 * digits + 2 + maxChunks;
}
/**
 * Tiles a workgroup takes in a row, sharing one set of global offsets (its counts): the reads and
 * writes of those, one per digit and scattered, cost as much as the records of a tile.
 */
const SUBTILES = 4;
/** Keys a workgroup partitions: a span of SUBTILES tiles, the unit of the counts. */
export function spanOf(tile: Tile): number {
  return tile * SUBTILES;
}
/** Chunks of the second pass, at most: each digit's records in spans. */
export function maxChunks(n: number, digits: number, tile: Tile): number {
  return Math.ceil(n / spanOf(tile)) + digits;
}

/** The region of a key. */
const regionOf = (key: string) => `(hv_b1(${key}) / ${REGION_BUCKETS}u)`;
/** Item k (0 .. tile / WORKGROUP_SIZE - 1) of each lane. */
const lanesOf = (tile: Tile) => [...Array(tile / WORKGROUP_SIZE).keys()];

/**
 * The plan's arrays, by the number of digits `params.aux0`: plan_start(d) (d <= D), plan_chunks(d),
 * plan_base(d) (d <= D: chunks before digit d), plan_digit(g) (the digit of chunk g).
 */
const planAccess = /* wgsl */ `
fn plan_start(d: u32) -> u32 { return plan[d]; }
fn plan_chunks(d: u32) -> u32 { return plan[params.aux0 + 1u + d]; }
fn plan_base(d: u32) -> u32 { return plan[2u * params.aux0 + 1u + d]; }
fn plan_digit(g: u32) -> u32 { return plan[3u * params.aux0 + 2u + g]; }`;

/**
 * Pass 1, count. One workgroup per span (grid-strided). Bindings: params (n = batch, aux0 = digits
 * D, aux1 = spans W), keys, counts (out: D x W, digit-major), spill (reserved keys appended).
 */
export function histogram1Kernel(tile: Tile): Kernel {
  const lanes = lanesOf(tile);
  return cachedKernel('bulk.histogram1', `${tile}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<storage, read_write> spill: array<atomic<u32>>;
var<workgroup> hist: array<atomic<u32>, ${MAX_DIGITS}>;
${entryPoint()} {
  for (var w = grid_workgroup(wid, nwg); w < params.aux1; w += nwg.x * nwg.y) {
    for (var d = lid; d < params.aux0; d += ${WORKGROUP_SIZE}u) { atomicStore(&hist[d], 0u); }
    workgroupBarrier();
    // Every load in flight before the first atomic.
    for (var sub = 0u; sub < ${SUBTILES}u; sub++) {
${lanes.map((k) => `    let i${k} = w * ${spanOf(tile)}u + sub * ${tile}u + ${k * WORKGROUP_SIZE}u + lid;\n    var k${k} = EMPTY;\n    if (i${k} < params.n) { k${k} = keys[i${k}]; }`).join('\n')}
${lanes
  .map(
    (k) => `    if (k${k} < TOMBSTONE) {
      atomicAdd(&hist[${regionOf(`k${k}`)} / ${DIGIT_REGIONS}u], 1u);
    } else if (i${k} < params.n) {
      atomicStore(&spill[1u + atomicAdd(&spill[0], 1u)], i${k});
    }`,
  )
  .join('\n')}
    }
    workgroupBarrier();
    for (var d = lid; d < params.aux0; d += ${WORKGROUP_SIZE}u) { counts[d * params.aux1 + w] = atomicLoad(&hist[d]); }
    workgroupBarrier();
  }
}`,
      { modules: [gridModule, commonModule] },
    ),
  );
}

/**
 * The exclusive scan of a tile's digit counts into st_local, and \`staged\` (their total): each
 * lane sums PER digits, then the lanes' sums are scanned. With subgroups, in subgroup order (lanes
 * take their digits by their place in it, so nothing is assumed about how invocations form
 * subgroups; \`scan_q\` and \`scan_sg\` come from stagedPrologue) and one barrier; without, by
 * Hillis-Steele over the workgroup, two barriers a step.
 */
function subgroupScan(per: number, digits: string): string {
  return /* wgsl */ `
    var sum = 0u;
    for (var k = 0u; k < ${per}u; k++) {
      let d = scan_q * ${per}u + k;
      if (d < ${digits}) { sum += atomicLoad(&st_count[d]); }
    }
    var run = subgroupExclusiveAdd(sum);
    let group_total = subgroupAdd(sum);
    if (sg_lane == 0u) { st_sg_sums[scan_sg] = group_total; }
    workgroupBarrier();
    var staged = 0u;
    for (var i = 0u; i < ${WORKGROUP_SIZE}u / sg_size; i++) {
      let t = st_sg_sums[i];
      if (i < scan_sg) { run += t; }
      staged += t;
    }
    for (var k = 0u; k < ${per}u; k++) {
      let d = scan_q * ${per}u + k;
      if (d < ${digits}) {
        st_local[d] = run;
        run += atomicLoad(&st_count[d]);
      }
    }`;
}
function barrierScan(per: number, digits: string): string {
  return /* wgsl */ `
    var sum = 0u;
    for (var k = 0u; k < ${per}u; k++) {
      let d = lid * ${per}u + k;
      if (d < ${digits}) { sum += atomicLoad(&st_count[d]); }
    }
    st_partial[lid] = sum;
    workgroupBarrier();
    for (var step = 1u; step < ${WORKGROUP_SIZE}u; step <<= 1u) {
      var add = 0u;
      if (lid >= step) { add = st_partial[lid - step]; }
      workgroupBarrier();
      st_partial[lid] += add;
      workgroupBarrier();
    }
    var run = st_partial[lid] - sum;
    for (var k = 0u; k < ${per}u; k++) {
      let d = lid * ${per}u + k;
      if (d < ${digits}) {
        st_local[d] = run;
        run += atomicLoad(&st_count[d]);
      }
    }
    let staged = st_partial[${WORKGROUP_SIZE - 1}u];`;
}

/** Numbers the subgroups of a workgroup (a workgroup atomic each): scan_sg, and scan_q, the lane's place in subgroup order. */
function stagedPrologue(subgroups: boolean): string {
  if (!subgroups) return '';
  return /* wgsl */ `
  var scan_sg = 0u;
  if (sg_lane == 0u) { scan_sg = atomicAdd(&st_sg_next, 1u); }
  scan_sg = subgroupBroadcastFirst(scan_sg);
  let scan_q = scan_sg * sg_size + sg_lane;`;
}

/**
 * A tile's records written out grouped by digit, through workgroup memory: each record takes a
 * rank among its digit's (a workgroup atomic), the counts are scanned into the tile's local
 * offsets, the records are staged in digit order, and then lane j writes staged record j to its
 * digit's global offset for this tile plus its place in the run. Neighbouring lanes write
 * neighbouring records, so a store covers a few lines; written from registers, each record went to
 * another line, and both scatters took 3.8 and 4.4 ms for 2^27 x 0.95 keys on an H200, the store
 * requests the limit (much as a random gather's loads).
 *   digits: count; load: per item k, sets rec{k} and ok{k}; digit: of a record; global: the
 *   tile's global offset of digit d; out: the output binding.
 */
function stagedScatter(
  tile: Tile,
  subgroups: boolean,
  o: { digits: string; load: (k: number) => string; digit: (rec: string) => string; global: string; out: string },
): string {
  const lanes = lanesOf(tile);
  const per = MAX_DIGITS / WORKGROUP_SIZE;
  return /* wgsl */ `
    for (var d = lid; d < ${o.digits}; d += ${WORKGROUP_SIZE}u) { st_global[d] = ${o.global}; }
    for (var sub = 0u; sub < ${SUBTILES}u; sub++) {
    for (var d = lid; d < ${o.digits}; d += ${WORKGROUP_SIZE}u) { atomicStore(&st_count[d], 0u); }
    workgroupBarrier();
${lanes.map((k) => o.load(k)).join('\n')}
${lanes.map((k) => `    var rank${k} = 0u;\n    if (ok${k}) { rank${k} = atomicAdd(&st_count[${o.digit(`rec${k}`)}], 1u); }`).join('\n')}
    workgroupBarrier();
${subgroups ? subgroupScan(per, o.digits) : barrierScan(per, o.digits)}
    workgroupBarrier();
${lanes.map((k) => `    if (ok${k}) { st_records[st_local[${o.digit(`rec${k}`)}] + rank${k}] = rec${k}; }`).join('\n')}
    workgroupBarrier();
    for (var j = lid; j < staged; j += ${WORKGROUP_SIZE}u) {
      let rec = st_records[j];
      let d = ${o.digit('rec')};
      ${o.out}[st_global[d] + j - st_local[d]] = rec;
    }
    workgroupBarrier();
    // The span's next tile goes after this one's records.
    for (var d = lid; d < ${o.digits}; d += ${WORKGROUP_SIZE}u) { st_global[d] += atomicLoad(&st_count[d]); }
    workgroupBarrier();
    }`;
}

const stagedMemory = (tile: Tile, subgroups: boolean) => /* wgsl */ `
var<workgroup> st_records: array<vec4<u32>, ${tile}>;
var<workgroup> st_count: array<atomic<u32>, ${MAX_DIGITS}>;
var<workgroup> st_local: array<u32, ${MAX_DIGITS}>;
var<workgroup> st_global: array<u32, ${MAX_DIGITS}>;
${subgroups ? `var<workgroup> st_sg_next: atomic<u32>;\nvar<workgroup> st_sg_sums: array<u32, ${WORKGROUP_SIZE}>;` : `var<workgroup> st_partial: array<u32, ${WORKGROUP_SIZE}>;`}`;
/** Entry parameters of a staged scatter. */
const stagedEntry = (subgroups: boolean) =>
  entryPoint(subgroups ? '@builtin(subgroup_invocation_id) sg_lane: u32, @builtin(subgroup_size) sg_size: u32' : '');
/** Modules of a staged scatter. */
const stagedModules = (subgroups: boolean) => (subgroups ? [gridModule, commonModule, subgroupsModule] : [gridModule, commonModule]);
const subgroupsModule = wgslModule('hive.partition.subgroups', '', [], ['subgroups']);

/**
 * Pass 1, place. Bindings: params (as histogram1), keys, values, offsets (the scanned counts),
 * parted (out: records grouped by digit).
 */
export function scatter1Kernel(tile: Tile, subgroups: boolean): Kernel {
  return cachedKernel('bulk.scatter1', `${tile}.${subgroups ? 'sg' : 'fb'}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> values: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> parted: array<vec4<u32>>;
${stagedMemory(tile, subgroups)}
${stagedEntry(subgroups)} {
${stagedPrologue(subgroups)}
  for (var w = grid_workgroup(wid, nwg); w < params.aux1; w += nwg.x * nwg.y) {
${stagedScatter(tile, subgroups, {
  digits: 'params.aux0',
  load: (k) =>
    `    let i${k} = w * ${spanOf(tile)}u + sub * ${tile}u + ${k * WORKGROUP_SIZE}u + lid;\n    var rec${k} = vec4<u32>(EMPTY, 0u, i${k}, 0u);\n    if (i${k} < params.n) { rec${k}.x = keys[i${k}]; rec${k}.y = values[i${k}]; }\n    let ok${k} = rec${k}.x < TOMBSTONE;`,
  digit: (rec) => `(${regionOf(`${rec}.x`)} / ${DIGIT_REGIONS}u)`,
  global: 'offsets[d * params.aux1 + w]',
  out: 'parted',
})}
  }
}`,
      { modules: stagedModules(subgroups) },
    ),
  );
}

/**
 * Cuts each digit's records into chunks of a span: one workgroup. Bindings: params (n = batch, aux0
 * = digits D, aux1 = spans W of pass 1), offsets (pass 1's scanned counts), spill (word 0: the
 * reserved keys, so far), plan (out, see planWords).
 */
export function planKernel(tile: Tile): Kernel {
  return cachedKernel('bulk.plan', `${tile}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> offsets: array<u32>;
@group(0) @binding(2) var<storage, read> spill: array<u32>;
@group(0) @binding(3) var<storage, read_write> plan: array<u32>;
var<workgroup> partial: array<u32, ${WORKGROUP_SIZE}>;
const PER: u32 = ${MAX_DIGITS / WORKGROUP_SIZE}u;

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(local_invocation_index) lid: u32) {
  let digits = params.aux0;
  let total = params.n - spill[0];
  // Lane lid plans digits lid * PER .. lid * PER + PER - 1.
  var sum = 0u;
  for (var k = 0u; k < PER; k++) {
    let d = lid * PER + k;
    if (d < digits) {
      let start = offsets[d * params.aux1];
      let end = select(total, offsets[(d + 1u) * params.aux1], d + 1u < digits);
      let chunks = (end - start + ${spanOf(tile) - 1}u) / ${spanOf(tile)}u;
      plan[d] = start;
      plan[digits + 1u + d] = chunks;
      sum += chunks;
    }
  }
  // Exclusive scan of the lanes' sums (Hillis-Steele in workgroup memory).
  partial[lid] = sum;
  workgroupBarrier();
  for (var step = 1u; step < ${WORKGROUP_SIZE}u; step <<= 1u) {
    var add = 0u;
    if (lid >= step) { add = partial[lid - step]; }
    workgroupBarrier();
    partial[lid] += add;
    workgroupBarrier();
  }
  var base = partial[lid] - sum;
  for (var k = 0u; k < PER; k++) {
    let d = lid * PER + k;
    if (d < digits) {
      let chunks = plan[digits + 1u + d];
      plan[2u * digits + 1u + d] = base;
      for (var c = 0u; c < chunks; c++) { plan[3u * digits + 2u + base + c] = d; }
      base += chunks;
    }
  }
  if (lid == ${WORKGROUP_SIZE - 1}u) {
    plan[digits] = total;
    plan[3u * digits + 1u] = partial[lid];
  }
}`,
      { modules: [commonModule] },
    ),
  );
}

/** The second pass's chunk loop: chunk g of digit d, records first .. last - 1. */
const chunkHead = (tile: Tile) => /* wgsl */ `
  let chunks_total = plan_base(params.aux0);
  for (var g = grid_workgroup(wid, nwg); g < chunks_total; g += nwg.x * nwg.y) {
    let d = plan_digit(g);
    let c = g - plan_base(d);
    let first = plan_start(d) + c * ${spanOf(tile)}u;
    let last = min(first + ${spanOf(tile)}u, plan_start(d + 1u));
    // Counters of chunk c of digit d, region by region: (digit, region, chunk)-major.
    let slot0 = ${DIGIT_REGIONS}u * plan_base(d) + c;
    let stride = plan_chunks(d);`;

/**
 * Pass 2, count. Bindings: params (aux0 = digits D), parted, plan, counts (out: DIGIT_REGIONS per
 * chunk, (digit, region, chunk)-major).
 */
export function histogram2Kernel(tile: Tile): Kernel {
  const lanes = lanesOf(tile);
  return cachedKernel('bulk.histogram2', `${tile}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> parted: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> plan: array<u32>;
@group(0) @binding(3) var<storage, read_write> counts: array<u32>;
var<workgroup> hist: array<atomic<u32>, ${DIGIT_REGIONS}>;
${planAccess}
${entryPoint()} {
${chunkHead(tile)}
    for (var f = lid; f < ${DIGIT_REGIONS}u; f += ${WORKGROUP_SIZE}u) { atomicStore(&hist[f], 0u); }
    workgroupBarrier();
    for (var sub = 0u; sub < ${SUBTILES}u; sub++) {
${lanes.map((k) => `    let p${k} = first + sub * ${tile}u + ${k * WORKGROUP_SIZE}u + lid;\n    var key${k} = EMPTY;\n    if (p${k} < last) { key${k} = parted[p${k}].x; }`).join('\n')}
${lanes.map((k) => `    if (p${k} < last) { atomicAdd(&hist[${regionOf(`key${k}`)} % ${DIGIT_REGIONS}u], 1u); }`).join('\n')}
    }
    workgroupBarrier();
    for (var f = lid; f < ${DIGIT_REGIONS}u; f += ${WORKGROUP_SIZE}u) { counts[slot0 + f * stride] = atomicLoad(&hist[f]); }
    workgroupBarrier();
  }
}`,
      { modules: [gridModule, commonModule] },
    ),
  );
}

/** Pass 2, place. Bindings: params (as histogram2), parted, plan, offsets (the scanned counts), records (out). */
export function scatter2Kernel(tile: Tile, subgroups: boolean): Kernel {
  return cachedKernel('bulk.scatter2', `${tile}.${subgroups ? 'sg' : 'fb'}`, () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> parted: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> plan: array<u32>;
@group(0) @binding(3) var<storage, read> offsets: array<u32>;
@group(0) @binding(4) var<storage, read_write> records: array<vec4<u32>>;
${stagedMemory(tile, subgroups)}
${planAccess}
${stagedEntry(subgroups)} {
${stagedPrologue(subgroups)}
${chunkHead(tile)}
${stagedScatter(tile, subgroups, {
  digits: `${DIGIT_REGIONS}u`,
  load: (k) =>
    `    let p${k} = first + sub * ${tile}u + ${k * WORKGROUP_SIZE}u + lid;\n    var rec${k} = vec4<u32>(EMPTY, 0u, 0u, 0u);\n    if (p${k} < last) { rec${k} = parted[p${k}]; }\n    let ok${k} = p${k} < last;`,
  digit: (rec) => `(${regionOf(`${rec}.x`)} % ${DIGIT_REGIONS}u)`,
  global: 'offsets[slot0 + d * stride]',
  out: 'records',
})}
  }
}`,
      { modules: stagedModules(subgroups) },
    ),
  );
}

/**
 * Each region's end offset in the records, for the build. Bindings: params (n = regions, aux0 =
 * digits D), plan, offsets (pass 2's scanned counts), ends (out).
 */
export function boundsKernel(): Kernel {
  return cachedKernel('bulk.bounds', '', () =>
    composeWgsl(
      /* wgsl */ `
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> plan: array<u32>;
@group(0) @binding(2) var<storage, read> offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> ends: array<u32>;
${planAccess}
/** The first record of region r: its chunk-0 counter's offset (the digit's start when it has no chunk). */
fn region_begin(r: u32) -> u32 {
  let d = r / ${DIGIT_REGIONS}u;
  if (plan_chunks(d) == 0u) { return plan_start(d); }
  return offsets[${DIGIT_REGIONS}u * plan_base(d) + (r % ${DIGIT_REGIONS}u) * plan_chunks(d)];
}
${entryPoint()} {
  ${gridLoop('r', 'params.n')} {
    ends[r] = select(plan_start(params.aux0), region_begin(r + 1u), r + 1u < params.n);
  }
}`,
      { modules: [gridModule, commonModule] },
    ),
  );
}
