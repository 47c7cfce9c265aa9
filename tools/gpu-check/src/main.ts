/**
 * gpu-check: runs the workspace's GPU check suites on whatever adapter is present, at a chosen
 * scale, and prints one line per check plus a summary. On a GPU host:
 *   bash .gpu-bundle/run.sh [--scale N] [--filter TEXT] [--json FILE] [--require-hardware]
 */
import { writeFileSync } from 'node:fs';
import { requestGpu } from '@gpuhash/core';
import { checkRng } from '@gpuhash/testing';
import { suiteLoaders } from './suites';

interface Args {
  scale: number;
  filter: string;
  json?: string;
  requireHardware: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { scale: 64, filter: '', requireHardware: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      return v as string;
    };
    if (a === '--scale') args.scale = Number(value());
    else if (a === '--filter') args.filter = value();
    else if (a === '--json') args.json = value();
    else if (a === '--require-hardware') args.requireHardware = true;
    else usage(`unknown argument ${a}`);
  }
  if (!Number.isInteger(args.scale) || args.scale < 1) usage('--scale takes a positive integer');
  return args;
}

/**
 * A failure's first lines, then its causes' (fast-check 4 keeps the assertion that failed only in
 * `cause`; the message is the counterexample, which can be megabytes on one line): each capped.
 */
function describeError(error: unknown): string {
  const parts: string[] = [];
  let e: unknown = error;
  for (let depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const lines = String(e).split('\n').slice(0, 8);
    parts.push((depth > 0 ? 'caused by: ' : '') + lines.map((l) => (l.length > 600 ? `${l.slice(0, 600)}...` : l)).join('\n'));
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join('\n');
}

function usage(problem: string): never {
  console.error(`gpu-check: ${problem}\nusage: gpu-check [--scale N] [--filter TEXT] [--json FILE] [--require-hardware]`);
  process.exit(2);
}

const args = parseArgs(process.argv.slice(2));
const gpu = await requestGpu({ allowSoftware: !args.requireHardware });
const adapter = gpu.adapterInfo;
console.log(`device: ${gpu.describe()}`);
console.log(`driver: ${adapter?.description ?? 'unknown'}; scale ${args.scale}`);

const results: Array<{ suite: string; check: string; ok: boolean; ms: number; error?: string }> = [];
for (const [group, load] of Object.entries(suiteLoaders)) {
  let suites: Awaited<ReturnType<typeof load>>;
  try {
    suites = await load();
  } catch (error) {
    results.push({ suite: group, check: 'load', ok: false, ms: 0, error: String(error) });
    console.log(`FAIL ${group}: could not load: ${error}`);
    continue;
  }
  for (const suite of suites) {
    for (const check of suite.checks) {
      const name = `${suite.suite} > ${check.name}`;
      if (args.filter && !name.includes(args.filter)) continue;
      const t0 = performance.now();
      try {
        await check.run({ gpu, rng: checkRng(suite.suite, check.name), scale: args.scale });
        const ms = performance.now() - t0;
        results.push({ suite: suite.suite, check: check.name, ok: true, ms });
        console.log(`ok   ${name} (${ms.toFixed(0)} ms)`);
      } catch (error) {
        const ms = performance.now() - t0;
        results.push({ suite: suite.suite, check: check.name, ok: false, ms, error: describeError(error) });
        console.log(`FAIL ${name} (${ms.toFixed(0)} ms)\n${describeError(error)}`);
      }
    }
  }
}
const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
if (args.json) {
  const report = {
    date: new Date().toISOString(),
    device: gpu.describe(),
    adapter: adapter
      ? { vendor: adapter.vendor, architecture: adapter.architecture, device: adapter.device, description: adapter.description }
      : null,
    subgroups: gpu.subgroups,
    scale: args.scale,
    results,
  };
  writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
}
gpu.destroy();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
