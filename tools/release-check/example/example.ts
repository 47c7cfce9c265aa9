// The README's example as a complete program: what a new user writes after `npm install
// @gpuhash/hive webgpu`. The release check typechecks it with a plain strict `tsc`, runs it in Node
// and bundles it for the browser (esbuild, Vite, webpack); in every case it reports through
// `globalThis.gpuhashResult` and the console, and throws when an answer is wrong.
import { type FindResult, type Gpu, GpuhashError, HiveTable, Op, requestGpu } from '@gpuhash/hive';

interface Result {
  ok: boolean;
  lines: string[];
  error?: string;
}

const result: Result = { ok: false, lines: [] };
(globalThis as { gpuhashResult?: Result }).gpuhashResult = undefined;

function expectEqual(what: string, actual: ArrayLike<number>, expected: readonly number[]): void {
  const got = Array.from(actual);
  if (got.length !== expected.length || got.some((v, i) => v !== expected[i])) {
    throw new Error(`${what}: expected [${expected.join(', ')}], got [${got.join(', ')}]`);
  }
  result.lines.push(`${what}: [${got.join(', ')}]`);
}

async function main(): Promise<void> {
  // allowSoftware: SwiftShader (the CPU) is fine here, no GPU needed.
  const gpu: Gpu = await requestGpu({ allowSoftware: true, log: () => {} });
  const device: GPUDevice = gpu.device;
  result.lines.push(`device: ${gpu.describe()}${device.label ? ` (${device.label})` : ''}`);
  const table = await HiveTable.create(gpu, { capacity: 1 << 12 });
  try {
    const inserted = await table.insert(new Uint32Array([1, 2, 3]), new Uint32Array([10, 20, 30]));
    expectEqual('inserted, failed', [inserted.inserted, inserted.failed.length], [3, 0]);

    const { values, found }: FindResult = await table.find(new Uint32Array([2, 4]));
    expectEqual('find values', values, [20, 0]);
    expectEqual('find found', found, [1, 0]);

    await table.insertOrAssign(new Uint32Array([2]), new Uint32Array([21]));
    expectEqual('erased', [await table.erase(new Uint32Array([1]))], [1]);
    const mixed = await table.apply({
      ops: new Uint8Array([Op.insert, Op.find, Op.erase]),
      keys: new Uint32Array([7, 2, 3]),
      values: new Uint32Array([70, 0, 0]),
    });
    expectEqual('apply find', [mixed.values[1] ?? -1], [21]);
    expectEqual('size', [table.size], [2]);

    let refused = false;
    try {
      await table.insert(new Uint32Array([0xffffffff]), new Uint32Array([1]));
    } catch (e) {
      refused = e instanceof GpuhashError;
    }
    expectEqual('reserved key refused', [Number(refused)], [1]);
  } finally {
    table.destroy();
    gpu.destroy();
  }
}

try {
  await main();
  result.ok = true;
  console.log(`example: ok\n  ${result.lines.join('\n  ')}`);
} catch (e) {
  result.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  console.log(`example: FAILED ${result.error}`);
  throw e;
} finally {
  (globalThis as { gpuhashResult?: Result }).gpuhashResult = result;
}
