import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { findSwiftShaderIcd, ShardError } from '@gpuhash/core';
import { TableModel } from '@gpuhash/testing';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceAliases } from '../../../workspace-aliases.mjs';
import { ShardedTable, ShardWorkers } from '../src/index';

/**
 * Shards in worker threads and child processes, each with its own Dawn instance (SwiftShader
 * here). The shard script is bundled first, as a GPU host runs it: one ESM file, webgpu external.
 */
// A worker's process.env is a copy: the Vulkan loader in a worker reads the process's real
// environment, which only the main thread sets. Without a GPU, point it at SwiftShader here.
if (!process.env.VK_ICD_FILENAMES) {
  const icd = await findSwiftShaderIcd();
  if (icd) process.env.VK_ICD_FILENAMES = icd;
}

const dir = fileURLToPath(new URL('../node_modules/.cache/sharded-test/', import.meta.url));
const script = `${dir}shard-worker.mjs`;

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  await build({
    entryPoints: [fileURLToPath(new URL('./fixtures/shard-worker.ts', import.meta.url))],
    outfile: script,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['webgpu'],
    alias: workspaceAliases(),
    logLevel: 'warning',
  });
});

const keysFor = (n: number, salt: number) => Uint32Array.from({ length: n }, (_, i) => (Math.imul(i + 1, 0x9e3779b1) ^ salt) >>> 1);

for (const kind of ['worker', 'process'] as const) {
  describe(`shards in ${kind === 'worker' ? 'worker threads' : 'child processes'}`, () => {
    let workers: ShardWorkers;
    beforeAll(async () => {
      workers = await ShardWorkers.open({ script, kind, count: 2, gpu: { allowSoftware: true }, log: () => {} });
    });
    afterAll(async () => {
      await workers?.close();
    });

    it('runs a sharded table against the model', async () => {
      expect(workers.count).toBe(2);
      expect(workers.placements.map((p) => p.isSoftware)).toEqual([true, true]);
      const table = await ShardedTable.create(workers, { factory: 'linear-probe', options: { capacity: 4096, growth: false } });
      const model = new TableModel();
      const keys = keysFor(1500, 0x1234);
      const values = keysFor(1500, 0x777);
      const r = await table.insert(keys.slice(0, 1000), values.slice(0, 1000));
      model.insert(keys.subarray(0, 1000), values.subarray(0, 1000), false);
      expect(r.inserted).toBe(1000);
      expect(table.size).toBe(1000);
      expect(table.shardSizes.every((s) => s > 300)).toBe(true);
      await table.insertOrAssign(keys.slice(500, 1500), keys.slice(500, 1500));
      model.insert(keys.subarray(500, 1500), keys.subarray(500, 1500), true);
      expect(await table.erase(keys.slice(0, 100))).toBe(model.erase(keys.subarray(0, 100)));
      const got = await table.find(keys);
      for (let i = 0; i < keys.length; i++) {
        const want = model.map.get(keys[i] as number);
        expect([got.found[i], got.values[i]]).toEqual(want === undefined ? [0, 0] : [1, want]);
      }
      expect(await workers.run(0, 'size')).toEqual([table.shardSizes[0]]);
      // The caller's arrays stay theirs: the shards get copies.
      expect(keys.length).toBe(1500);
      const echoed = await workers.echo(1, new Uint32Array([1, 2, 3]));
      expect([...echoed]).toEqual([1, 2, 3]);
      table.destroy();
    });

    it('a dead shard fails the operations that touch it; the other answers', async () => {
      const table = await ShardedTable.create(workers, { factory: 'linear-probe', options: { capacity: 4096 } });
      const keys = keysFor(400, 0xbeef);
      await table.insert(keys, keys);
      const on0 = keys.filter((k) => table.shardOf(k) === 0);
      await workers.terminate(1);
      await expect(table.find(on0)).resolves.toMatchObject({ found: new Uint8Array(on0.length).fill(1) });
      const error = await table.find(keys).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ShardError);
      expect(error).toMatchObject({ shard: 1, dead: true, code: 'SHARD_FAILED' });
      expect((error as ShardError).indices.length).toBe(keys.length - on0.length);
      expect(table.deadShards).toEqual([1]);
      table.destroy();
    });
  });
}
