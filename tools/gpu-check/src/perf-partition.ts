/**
 * The bulk build's partition alone, per kernel (timestamps around every pass), for each partition
 * tile the device can run, beside a plain copy of the same records (the bandwidth a pass that
 * reads and writes 16 bytes per key could reach): 2^LOG x 0.95 keys into a table of 2^LOG slots.
 *   node perf-partition.mjs [log2Capacity=27]
 */
import { requestGpu } from '@gpuhash/core';
import { HiveTable } from '@gpuhash/hive';
import { fmix32 } from '@gpuhash/kernels';
import type { Dispatcher } from '../../../packages/hive/src/dispatcher';
import type { HiveStorage } from '../../../packages/hive/src/storage';
import { partitionWorkgroupBytes, scatter1Kernel, spanOf, type Tile } from '../../../packages/hive/src/wgsl/partition';

const log = Number(process.argv[2] ?? 27);
const capacity = 2 ** log;
const gpu = await requestGpu({ allowSoftware: true });
console.log(`device: ${gpu.describe()}; capacity 2^${log}`);
const table = await HiveTable.create(gpu, { capacity, growth: false });
const { d, storage } = table as unknown as { d: Dispatcher; storage: HiveStorage };
const n = Math.floor(capacity * 0.95);
const keys = new Uint32Array(n);
for (let i = 0; i < n; i++) keys[i] = fmix32(2 * i + 1) % 0xfffffffe;
const dk = gpu.upload(keys);

async function timed(label: string, encode: (enc: GPUCommandEncoder) => void): Promise<void> {
  const timer = gpu.createTimer(256);
  d.profile = (k) => timer.slot(k);
  const enc = gpu.device.createCommandEncoder();
  encode(enc);
  timer.resolve(enc);
  gpu.submit([enc.finish()]);
  timer.submitted();
  const t = await timer.read();
  d.profile = undefined;
  timer.destroy();
  const total = t.passes.reduce((a, p) => a + p.ms, 0);
  console.log(`${label}: ${total.toFixed(2)} ms GPU`);
  for (const p of t.passes) console.log(`  ${p.label.padEnd(24)} ${p.ms.toFixed(3)} ms`);
}

const copyKernel = {
  name: 'perf.copy16',
  workgroupSize: 256,
  source: /* wgsl */ `
@group(0) @binding(0) var<uniform> params: vec4<u32>;
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {
  for (var i = (wid.y * nwg.x + wid.x) * 256u + lid; i < params.x; i += nwg.x * nwg.y * 256u) { dst[i] = src[i]; }
}`,
};

for (const tile of [2048, 1024] as Tile[]) {
  if (partitionWorkgroupBytes(tile) > gpu.limits.maxComputeWorkgroupStorageSize) continue;
  const scratch = storage.bulkScratch(n, table.buckets, tile);
  for (let rep = 0; rep < 2; rep++) {
    await timed(`partition of ${n} keys, tile ${tile}, rep ${rep}`, (enc) => {
      enc.clearBuffer(scratch.spill, 0, 4);
      d.encodePartition(enc, { keys: dk.buffer, values: dk.buffer, n, mode: 0 }, scratch);
    });
  }
  const params = gpu.uniforms(new Uint32Array([n, 0, 0, 0]));
  const timer = gpu.createTimer(8);
  const enc = gpu.device.createCommandEncoder();
  gpu.encodeDispatch(enc, copyKernel, { bindings: [params, scratch.parted, scratch.records], invocations: n }, timer.slot('copy'));
  timer.resolve(enc);
  gpu.submit([enc.finish()]);
  timer.submitted();
  const t = await timer.read();
  timer.destroy();
  gpu.pool.release(params);
  console.log(`copy of ${n} 16-byte records: ${t.passes[0]?.ms.toFixed(3)} ms`);
}

// Where the first scatter's time goes: variants of its WGSL (wrong results, same traffic otherwise)
// without the workgroup scan, with coalesced stores, and with neither.
{
  const tile: Tile = 2048;
  if (partitionWorkgroupBytes(tile) <= gpu.limits.maxComputeWorkgroupStorageSize) {
    const scratch = storage.bulkScratch(n, table.buckets, tile);
    const base = scatter1Kernel(tile, gpu.subgroups.supported);
    const noScan = (src: string) => src.replace(/for \(var step = 1u;[\s\S]*?\n {4}\}\n/, '');
    const coalesced = (src: string) =>
      src.replace(/parted\[st_global\[d\] \+ j - st_local\[d\]\] = rec;/, `parted[w * ${spanOf(tile)}u + sub * ${tile}u + j] = rec;`);
    const variants: [string, string][] = [
      ['as built', base.source],
      ['no scan', noScan(base.source)],
      ['coalesced stores', coalesced(base.source)],
      ['neither', coalesced(noScan(base.source))],
    ];
    for (const [label, source] of variants) {
      if (label !== 'as built' && source === base.source) console.log(`variant ${label}: the patch did not apply`);
      const kernel = { ...base, name: `perf.scatter1.${label.replace(/ /g, '-')}`, cacheKey: label, source };
      const tiles = Math.ceil(n / spanOf(tile));
      for (let rep = 0; rep < 2; rep++) {
        await timed(`scatter1 ${label}, rep ${rep}`, (enc) => {
          d.dispatch(enc, kernel, tiles * 256, [dk.buffer, dk.buffer, scratch.counts1, scratch.parted], {
            n,
            aux0: scratch.digits,
            aux1: tiles,
          });
        });
      }
    }
  }
}
