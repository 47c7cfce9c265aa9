import {
  compact,
  type DeviceArray,
  encodeCompact,
  encodeCompactWithScan,
  encodeExclusiveScan,
  exclusiveScan,
  type Gpu,
  InvalidArgumentError,
  type Kernel,
  LimitExceededError,
  type ScanOptions,
} from '@gpuhash/core';
import { defineChecks, expectSameArrays, type Rng, runKernelOnArrays } from '@gpuhash/testing';
import {
  compactCpu,
  DEFAULT_SCAN_CONFIG,
  exclusiveScanCpu,
  packScanParams,
  type ScanConfig,
  scanBlockSize,
  scanBlockSumsCpu,
  scanLevelSizes,
  scanReduceWgsl,
} from '../src/scan';

const B = scanBlockSize(DEFAULT_SCAN_CONFIG);
/** Tiny blocks reach three or more levels with a few hundred elements. */
const TINY: ScanConfig[] = [
  { workgroupSize: 4, itemsPerThread: 2 }, // 8-element blocks
  { workgroupSize: 8, itemsPerThread: 3 }, // 24: items not a power of two
  { workgroupSize: 2, itemsPerThread: 1 }, // 2: the smallest block, many levels
];

/** Random words, words near 2^32 (prefixes wrap), small words and zeros, mixed. */
function mixed(rng: Rng, n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const kind = rng.below(4);
    out[i] = kind === 0 ? rng.u32() : kind === 1 ? 0xffffffff - rng.below(16) : kind === 2 ? rng.below(4) : 0;
  }
  return out;
}

/** Flags: zero, or a random nonzero word (any nonzero keeps), with probability `keep`. */
function flagsOf(rng: Rng, n: number, keep: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) if (rng.u32() / 0x1_0000_0000 < keep) out[i] = rng.u32() | 1;
  return out;
}

function describeSize(n: number, config: ScanConfig): string {
  return `n=${n} block=${scanBlockSize(config)} levels=${scanLevelSizes(n, scanBlockSize(config)).length}`;
}

async function gpuScan(gpu: Gpu, input: Uint32Array, options: ScanOptions = {}, inPlace = false): Promise<Uint32Array> {
  return gpu.run('scan check', async () => {
    const src = gpu.upload(input);
    const dst = inPlace ? src : gpu.createArray('u32', input.length);
    const encoder = gpu.device.createCommandEncoder();
    encodeExclusiveScan(gpu, encoder, src.buffer, dst.buffer, input.length, options);
    gpu.submit([encoder.finish()]);
    const out = new Uint32Array(await gpu.readBytes(dst.buffer, 0, input.length * 4));
    src.destroy();
    dst.destroy();
    return out;
  });
}

async function checkScan(gpu: Gpu, input: Uint32Array, options: ScanOptions = {}, inPlace = false): Promise<void> {
  const config = options.config ?? DEFAULT_SCAN_CONFIG;
  const got = await gpuScan(gpu, input, options, inPlace);
  const what = `exclusive scan ${describeSize(input.length, config)}${options.maxWorkgroups ? ` maxWorkgroups=${options.maxWorkgroups}` : ''}${inPlace ? ' in place' : ''}${options.countNonzero ? ' countNonzero' : ''}`;
  expectSameArrays(what, got, exclusiveScanCpu(input, options.countNonzero), { input });
}

const SENTINEL = 0xdeadbeef;

interface GpuCompact {
  values: Uint32Array;
  indices: Uint32Array;
  count: number;
  /** The count buffer's words around the count: must keep their sentinel. */
  countWords: Uint32Array;
}

/** Compacts on the GPU, fused (`encodeCompact`) or from a scan (`encodeCompactWithScan`); `capacity` sizes the outputs. */
async function gpuCompact(
  gpu: Gpu,
  values: Uint32Array,
  flags: Uint32Array,
  opts: { options?: ScanOptions; capacity?: number; withScan?: boolean; countIndex?: number } = {},
): Promise<GpuCompact> {
  return gpu.run('compact check', async () => {
    const n = flags.length;
    const capacity = opts.capacity ?? n;
    const countIndex = opts.countIndex ?? 2;
    const v = gpu.upload(values);
    const f = gpu.upload(flags);
    const out = gpu.createArray('u32', capacity);
    const idx = gpu.createArray('u32', capacity);
    const count = gpu.upload(new Uint32Array(countIndex + 2).fill(SENTINEL));
    const scan = opts.withScan ? gpu.createArray('u32', n) : undefined;
    const encoder = gpu.device.createCommandEncoder();
    const targets = { flags: f.buffer, n, values: v.buffer, output: out.buffer, indices: idx.buffer, count: count.buffer, countIndex };
    if (scan) {
      encodeExclusiveScan(gpu, encoder, f.buffer, scan.buffer, n, { ...opts.options, countNonzero: true });
      encodeCompactWithScan(gpu, encoder, { ...targets, scan: scan.buffer }, opts.options);
    } else {
      encodeCompact(gpu, encoder, targets, opts.options);
    }
    gpu.submit([encoder.finish()]);
    const countWords = new Uint32Array(await gpu.readBytes(count.buffer, 0, count.byteLength));
    const kept = Math.min(countWords[countIndex] as number, capacity);
    const result = {
      values: await gpu.download(out, kept),
      indices: await gpu.download(idx, kept),
      count: countWords[countIndex] as number,
      countWords,
    };
    for (const a of [v, f, out, idx, count, scan]) a?.destroy();
    return result;
  });
}

async function checkCompact(
  gpu: Gpu,
  values: Uint32Array,
  flags: Uint32Array,
  opts: { options?: ScanOptions; capacity?: number; withScan?: boolean; countIndex?: number } = {},
): Promise<void> {
  const config = opts.options?.config ?? DEFAULT_SCAN_CONFIG;
  const what = `compact${opts.withScan ? ' with scan' : ''} ${describeSize(flags.length, config)}${opts.capacity !== undefined ? ` capacity=${opts.capacity}` : ''}`;
  const got = await gpuCompact(gpu, values, flags, opts);
  const want = compactCpu(values, flags);
  const kept = Math.min(want.count, opts.capacity ?? flags.length);
  expectSameArrays(`${what}: count`, [got.count], [want.count]);
  expectSameArrays(`${what}: values`, got.values, want.values.subarray(0, kept));
  expectSameArrays(`${what}: indices`, got.indices, want.indices.subarray(0, kept));
  const countIndex = opts.countIndex ?? 2;
  const others = Array.from(got.countWords).filter((_, i) => i !== countIndex);
  expectSameArrays(
    `${what}: count buffer words other than the count`,
    others,
    others.map(() => SENTINEL),
  );
}

export const scanChecks = defineChecks('kernels/scan', [
  {
    name: 'exclusive scan: sizes around one default block (0, 1, 2, B-1, B, B+1)',
    async run({ gpu, rng }) {
      for (const n of [0, 1, 2, B - 1, B, B + 1, 2 * B + 3]) await checkScan(gpu, mixed(rng, n));
    },
  },
  {
    name: 'exclusive scan: ~300k * scale elements with the default block',
    async run({ gpu, rng, scale }) {
      const n = Math.round(300_000 * scale) + rng.below(1000);
      await checkScan(gpu, mixed(rng, n));
    },
  },
  {
    name: 'exclusive scan: tiny blocks, three and more levels',
    async run({ gpu, rng, scale }) {
      for (const config of TINY) {
        const b = scanBlockSize(config);
        const sizes = [b - 1, b, b + 1, b * b - 1, b * b, b * b + 1, b * b * b + 1, Math.max(600, b * b * b * 3) * scale];
        for (const n of sizes) await checkScan(gpu, mixed(rng, n), { config });
        if (scanLevelSizes(b * b * b + 1, b).length < 4) throw new Error(`expected 4 levels for block ${b}`);
      }
    },
  },
  {
    name: 'exclusive scan: fewer workgroups than blocks (grid stride)',
    async run({ gpu, rng, scale }) {
      for (const maxWorkgroups of [1, 3]) {
        await checkScan(gpu, mixed(rng, 1000 * scale), { config: TINY[0], maxWorkgroups });
        await checkScan(gpu, mixed(rng, 5 * B + 17), { maxWorkgroups });
      }
    },
  },
  {
    name: 'exclusive scan: wrap-around mod 2^32',
    async run({ gpu, rng }) {
      const n = 3 * B + 5;
      await checkScan(gpu, new Uint32Array(n).fill(0xffffffff));
      await checkScan(
        gpu,
        new Uint32Array(n).map(() => 0x80000000 + rng.below(3)),
      );
      await checkScan(
        gpu,
        new Uint32Array(700).map(() => 0xffffffff - rng.below(2)),
        { config: TINY[0] },
      );
    },
  },
  {
    name: 'exclusive scan: in place, and of nonzero flags',
    async run({ gpu, rng }) {
      for (const n of [1, B - 1, 4 * B + 1]) await checkScan(gpu, mixed(rng, n), {}, true);
      await checkScan(gpu, mixed(rng, 777), { config: TINY[1] }, true);
      await checkScan(gpu, flagsOf(rng, 3 * B + 1, 0.5), { countNonzero: true });
      await checkScan(gpu, flagsOf(rng, 1000, 0.3), { countNonzero: true, config: TINY[0] });
    },
  },
  {
    name: 'reduce pass: block sums equal their CPU twin',
    async run({ gpu, rng }) {
      for (const config of [DEFAULT_SCAN_CONFIG, ...TINY]) {
        const b = scanBlockSize(config);
        const n = 5 * b + 3;
        const input = mixed(rng, n);
        const blocks = Math.ceil(n / b);
        for (const countNonzero of [false, true]) {
          const kernel: Kernel = {
            name: 'test.scan.reduce',
            cacheKey: `${config.workgroupSize}x${config.itemsPerThread}`,
            workgroupSize: config.workgroupSize,
            source: scanReduceWgsl(config),
          };
          const [, , sums] = await runKernelOnArrays(gpu, {
            kernel,
            inputs: [packScanParams({ n, blocks, countNonzero }), input, new Uint32Array(blocks)],
            uniforms: [0],
            invocations: blocks * config.workgroupSize,
            maxWorkgroups: 2,
          });
          expectSameArrays(
            `block sums n=${n} block=${b} countNonzero=${countNonzero}`,
            sums as Uint32Array,
            scanBlockSumsCpu(input, b, countNonzero),
          );
        }
      }
    },
  },
  {
    name: 'compact: all, none and random flags, values and indices and count',
    async run({ gpu, rng, scale }) {
      const sizes = [0, 1, 2, B - 1, B, B + 1, Math.round(50_000 * scale)];
      for (const n of sizes) {
        for (const keep of [1, 0, 0.5, 0.01]) await checkCompact(gpu, rng.u32Array(n), flagsOf(rng, n, keep));
      }
      for (const config of TINY) {
        for (const n of [0, 1, scanBlockSize(config) + 1, 1000]) {
          for (const keep of [1, 0, 0.5])
            await checkCompact(gpu, rng.u32Array(n), flagsOf(rng, n, keep), { options: { config, maxWorkgroups: 2 }, countIndex: 0 });
        }
      }
    },
  },
  {
    name: 'compact: outputs smaller than the kept set keep a prefix and the true count',
    async run({ gpu, rng }) {
      const n = 3 * B + 7;
      await checkCompact(gpu, rng.u32Array(n), flagsOf(rng, n, 0.5), { capacity: 100 });
      await checkCompact(gpu, rng.u32Array(n), flagsOf(rng, n, 0.5), { capacity: 100, withScan: true });
    },
  },
  {
    name: 'compact from a precomputed scan',
    async run({ gpu, rng, scale }) {
      for (const n of [0, 1, B + 1, Math.round(20_000 * scale)]) {
        for (const keep of [1, 0, 0.5]) await checkCompact(gpu, rng.u32Array(n), flagsOf(rng, n, keep), { withScan: true });
      }
      await checkCompact(gpu, rng.u32Array(500), flagsOf(rng, 500, 0.5), {
        withScan: true,
        options: { config: TINY[0], maxWorkgroups: 1 },
      });
    },
  },
  {
    name: 'device-array helpers: exclusiveScan and compact',
    async run({ gpu, rng }) {
      const input = mixed(rng, 3 * B + 1);
      const inArr = gpu.upload(input) as DeviceArray<'u32'>;
      const scanned = await exclusiveScan(gpu, inArr);
      expectSameArrays('exclusiveScan(DeviceArray)', await gpu.download(scanned), exclusiveScanCpu(input));
      const flags = flagsOf(rng, input.length, 0.3);
      const fArr = gpu.upload(flags) as DeviceArray<'u32'>;
      const result = await compact(gpu, inArr, fArr, { indices: true });
      const want = compactCpu(input, flags);
      expectSameArrays('compact(DeviceArray) count', [result.count, result.values.length], [want.count, want.count]);
      expectSameArrays('compact(DeviceArray) values', await gpu.download(result.values), want.values);
      expectSameArrays('compact(DeviceArray) indices', await gpu.download(result.indices!), want.indices);
      const empty = gpu.createArray('u32', 0);
      expectSameArrays('exclusiveScan of nothing', [(await exclusiveScan(gpu, empty)).length], [0]);
      expectSameArrays('compact of nothing', [(await compact(gpu, empty, empty)).count], [0]);
      for (const a of [inArr, scanned, fArr, result.values, result.indices!, empty]) a.destroy();
    },
  },
  {
    name: 'one pipeline per specialisation serves every n',
    async run({ gpu, rng }) {
      await checkScan(gpu, mixed(rng, 5 * B));
      await checkCompact(gpu, rng.u32Array(5 * B), flagsOf(rng, 5 * B, 0.5));
      const before = gpu.pipelines.misses;
      for (const n of [1, B + 1, 17 * B + 3]) {
        await checkScan(gpu, mixed(rng, n));
        await checkCompact(gpu, rng.u32Array(n), flagsOf(rng, n, 0.5));
      }
      expectSameArrays('pipeline cache misses after warm-up', [gpu.pipelines.misses], [before]);
    },
  },
  {
    name: 'a timer given in the options times every pass',
    async run({ gpu, rng }) {
      const input = mixed(rng, 100); // 8-element blocks: levels of 100, 13 and 2 elements
      await gpu.run('timed scan', async () => {
        const src = gpu.upload(input);
        const dst = gpu.createArray('u32', input.length);
        const timer = gpu.createTimer();
        const encoder = gpu.device.createCommandEncoder();
        encodeExclusiveScan(gpu, encoder, src.buffer, dst.buffer, input.length, { config: TINY[0], timer });
        timer.resolve(encoder);
        gpu.submit([encoder.finish()]);
        timer.submitted();
        const timing = await timer.read();
        expectSameArrays('timed scan', new Uint32Array(await gpu.readBytes(dst.buffer, 0, dst.byteLength)), exclusiveScanCpu(input));
        if (timing.source === 'timestamp') {
          const labels = timing.passes.map((p) => p.label).join(' ');
          if (labels !== 'scan.reduce.0 scan.reduce.1 scan.downsweep.2 scan.downsweep.1 scan.downsweep.0')
            throw new Error(`timed passes: ${labels}`);
        }
        timer.destroy();
        src.destroy();
        dst.destroy();
      });
    },
  },
  {
    name: 'bad arguments and limits raise typed errors',
    async run({ gpu }) {
      const small = gpu.createArray('u32', 4);
      const encoder = gpu.device.createCommandEncoder();
      const expectThrow = (what: string, type: new (...args: never[]) => Error, f: () => void) => {
        try {
          f();
        } catch (e) {
          if (e instanceof type) return;
          throw new Error(`${what}: expected ${type.name}, got ${String(e)}`);
        }
        throw new Error(`${what}: expected ${type.name}, nothing was thrown`);
      };
      const huge = gpu.limits.maxStorageBufferBindingSize / 4 + 1;
      expectThrow('n beyond the binding limit', LimitExceededError, () =>
        encodeExclusiveScan(gpu, encoder, small.buffer, small.buffer, huge),
      );
      expectThrow('n beyond the buffer', InvalidArgumentError, () => encodeExclusiveScan(gpu, encoder, small.buffer, small.buffer, 5));
      expectThrow('fractional n', InvalidArgumentError, () => encodeExclusiveScan(gpu, encoder, small.buffer, small.buffer, 1.5));
      expectThrow('workgroup not a power of two', InvalidArgumentError, () =>
        encodeExclusiveScan(gpu, encoder, small.buffer, small.buffer, 4, { config: { workgroupSize: 3, itemsPerThread: 2 } }),
      );
      expectThrow('compact without outputs', InvalidArgumentError, () =>
        encodeCompact(gpu, encoder, { flags: small.buffer, n: 4, count: small.buffer }),
      );
      encoder.finish();
      small.destroy();
    },
  },
]);
