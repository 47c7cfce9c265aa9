/**
 * Linear-probe insert and lookup variants on one device, for choosing the defaults: read-ahead
 * settings (AHEAD="slots:pairs[:coop[:private steps[:tile[:insert steps]]]],...", the table's default and none unless given), the paper's blind
 * CAS against load-then-CAS (LOAD_CAS=1), at LOADS (default 0.5,0.75,0.9) of 2^LOG slots, with
 * find hits and misses (values checked) and a random 4-byte gather as the roofline. GPU time of
 * back-to-back passes in one submission, median of 5; the atomic insert path (BULK=always: the bulk build).
 *   AHEAD=8:4,0:0 LOADS=0.9,0.95 node perf-insert.mjs [log2Capacity=27]
 */
import { type Kernel, requestGpu } from '@gpuhash/core';
import { composeWgsl, fmix32, fmix32Module, gridModule } from '@gpuhash/kernels';
import { LinearProbeTable } from '@gpuhash/linear-probe';
import { clockWarmup } from './clock-warmup';

const log = Number(process.argv[2] ?? 27);
const capacity = 2 ** log;
const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}; capacity 2^${log}`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const gatherKernel: Kernel = {
  name: 'perf.gather',
  workgroupSize: 256,
  source: composeWgsl(
    `
struct P { n: u32, mask: u32, a: u32, b: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = grid_thread(wid, nwg, lid, 256u); i < p.n; i += grid_threads(nwg, 256u)) {
    dst[i] = src[hash_fmix32(i ^ p.a) & p.mask];
  }
}`,
    { modules: [gridModule, fmix32Module] },
  ),
};

// Half a second of arithmetic before every timed set, in its submission (clock-warmup.ts).
const warm = clockWarmup(gpu);

async function timePasses(
  label: string,
  reps: number,
  encode: (enc: GPUCommandEncoder, ts: GPUComputePassTimestampWrites | undefined, rep: number) => void,
): Promise<number> {
  const timer = gpu.createTimer(2 * reps + 2);
  const enc = gpu.device.createCommandEncoder();
  warm(enc);
  encode(enc, undefined, -1); // warm-up
  for (let r = 0; r < reps; r++) encode(enc, timer.slot(`${label}#${r}`), r);
  timer.resolve(enc);
  gpu.submit([enc.finish()]);
  timer.submitted();
  const t = await timer.read();
  timer.destroy();
  return median(t.passes.map((p) => p.ms));
}

// Roofline: random 4-byte gather over a 1 GiB (or smaller) buffer.
const gatherWords = Math.min(2 ** 28, gpu.limits.maxStorageBufferBindingSize / 4, 4 * capacity);
const src = gpu.createBuffer(gatherWords * 4, 'perf.src');
const n = capacity;
const dst = gpu.createBuffer(n * 4, 'perf.dst');
const gp = gpu.uniforms(new Uint32Array([n, gatherWords - 1, 7, 0]));
const gatherMs = await timePasses('gather', 5, (enc, ts) =>
  gpu.encodeDispatch(enc, gatherKernel, { bindings: [gp, src, dst], invocations: n }, ts),
);
const gatherRate = n / gatherMs / 1e6;
console.log(`gather4: ${gatherRate.toFixed(2)} G/s`);
src.destroy();

const reserved = (k: number) => k >= 0xfffffffd;
const maxKeys = Math.floor(capacity * 0.95);
const keys = new Uint32Array(maxKeys);
const misses = new Uint32Array(maxKeys);
for (let j = 0, i = 0; i < maxKeys; j++) {
  const k = fmix32(2 * j + 1);
  const m = fmix32(2 * j + 2);
  if (reserved(k) || reserved(m)) continue;
  keys[i] = k;
  misses[i] = m;
  i++;
}
const keyBuf = gpu.upload(keys).buffer;
const missBuf = gpu.upload(misses).buffer;
const valBuf = gpu.upload(keys.map((k) => k ^ 0x55)).buffer;
const outV = gpu.createBuffer(maxKeys * 4, 'perf.outV');
const outF = gpu.createBuffer(maxKeys * 4, 'perf.outF');
// Unbounded probing, as the bench's table (a build to 0.95 of 2^27 has probes past 4096).
const table = await LinearProbeTable.create(gpu, { capacity, growth: false, maxLoadFactor: 1, maxProbes: capacity });

// Probing settings to compare, "insertSlots:findPairs[:coop 0/1[:private steps[:coop tile[:insert private steps]]]]"
// (AHEAD="8:4:0,8:4:1:4:32:4"); the cooperative kernels run at every load.
// the table's own first.
const own = { ...table.probing };
const settings = (
  process.env.AHEAD ??
  `${own.ahead}:${own.pairsAhead}:${Number(own.coop)}:${own.privateSteps}:${own.coopTile}:${own.privateInsertSteps},0:0:0`
)
  .split(',')
  .map((x) => x.split(':').map(Number));
const loads = (process.env.LOADS ?? '0.5,0.75,0.9').split(',').map(Number);
// The insert path: 'never' (atomic, the default here) or 'always' (the partitioned bulk build).
const bulk = process.env.BULK === 'always' ? 'always' : 'never';
const variants = process.env.LOAD_CAS ? [true, false] : [true];

const say = (row: string) => console.log(row);
for (const load of loads) {
  const count = Math.floor(capacity * load);
  for (const [
    ahead = 0,
    pairsAhead = 0,
    coop = 0,
    privateSteps = own.privateSteps,
    coopTile = own.coopTile,
    privateInsertSteps = own.privateInsertSteps,
  ] of settings) {
    Object.assign(table.probing, {
      ahead,
      coopAhead: ahead,
      pairsAhead,
      coop: coop === 1 && gpu.subgroups.supported,
      coopFromLoad: 0,
      privateSteps,
      coopTile,
      privateInsertSteps,
    });
    const tag = `ahead ${ahead}:${pairsAhead}:${coop}:${privateSteps}:${coopTile}:${privateInsertSteps}`;
    for (const blindCas of variants) {
      const ms = await timePasses('insert', 5, (enc, ts) => {
        table.encodeClear(enc);
        table.encodeInsert(enc, keyBuf, valBuf, count, { timestampWrites: ts, blindCas, bulk });
      });
      await table.sync();
      if (table.size !== count) say(`  insert at ${load}: size ${table.size}, expected ${count}`);
      const rate = count / ms / 1e6;
      say(
        `insert ${blindCas ? 'blind-cas' : 'load-cas '} ${tag} load ${load}: ${rate.toFixed(2)} G/s (${((100 * rate) / gatherRate).toFixed(0)}% of gather)`,
      );
    }
    for (const [what, buf] of [
      ['find-hit ', keyBuf],
      ['find-miss', missBuf],
    ] as const) {
      const ms = await timePasses(what, 5, (enc, ts) => table.encodeFind(enc, buf, count, outV, outF, ts));
      const found = new Uint32Array(await gpu.readBytes(outF, 0, count * 4));
      const want = what.startsWith('find-hit') ? 1 : 0;
      let wrong = 0;
      for (let i = 0; i < count; i++) if (found[i] !== want) wrong++;
      if (want === 1) {
        const got = new Uint32Array(await gpu.readBytes(outV, 0, count * 4));
        for (let i = 0; i < count; i++) if (got[i] !== ((keys[i] as number) ^ 0x55) >>> 0) wrong++;
      }
      const rate = count / ms / 1e6;
      say(
        `${what} ${tag} load ${load}: ${rate.toFixed(2)} G/s (${((100 * rate) / gatherRate).toFixed(0)}% of gather)${wrong ? ` WRONG ${wrong}` : ''}`,
      );
    }
    const stats = await table.stats();
    say(`  stats at ${load}, ${tag}: avg probe ${stats.averageProbeLength.toFixed(2)}, max ${stats.maxProbeLength}`);
  }
}
table.destroy();
gpu.destroy();
