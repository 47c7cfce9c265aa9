#!/usr/bin/env node
// The release pipeline against a real registry, end to end, as a new user meets the packages:
//   1. copies the publishable packages (built dist, README, LICENSE) and the pending changesets into
//      a temp folder and runs `changeset version --snapshot` there (the repository is never touched);
//   2. starts Verdaccio on 127.0.0.1 (storage in the temp folder; @gpuhash/* only from here, every
//      other package proxied from the upstream registry) and publishes with `changeset publish`;
//   3. in empty projects, installs @gpuhash/hive, then every table package, with npm and with pnpm;
//      typechecks the README's example (example/example.ts) and a program using every table with a
//      plain `tsc --strict --module nodenext --moduleResolution nodenext`, and runs both in Node;
//   4. bundles the example for the browser with esbuild, Vite and webpack (`target: 'web'`, no Node
//      polyfills), loads each bundle in headless Chromium (playwright-core) and checks its answers.
// Prints a line per step and ends with "release check: PASS" (exit 0) or "release check: FAIL".
//   node tools/release-check/src/release-check.mjs [--keep] [--no-browser]
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ROOT, tablePackages, workspacePackages } from '../../workspace/packages.mjs';
import { loadInBrowser } from './browser.mjs';
import { startRegistry } from './registry.mjs';
import { REQUIRED_TYPES, requiredValues } from './required-exports.mjs';

const HERE = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(HERE, 'node_modules', '.bin');
const args = new Set(process.argv.slice(2));
const keep = args.has('--keep');
const browser = !args.has('--no-browser');
const TAG = 'release-check';
const started = Date.now();

const secs = (ms) => `${(ms / 1000).toFixed(1)}s`;
const log = (line) => console.log(`[release-check ${secs(Date.now() - started).padStart(6)}] ${line}`);

async function step(name, fn) {
  const t0 = Date.now();
  log(`${name} ...`);
  const value = await fn();
  log(`${name}: ok (${secs(Date.now() - t0)})`);
  return value;
}

/**
 * The environment commands run in: without the npm_config_* variables a `pnpm run` or `npm run`
 * above us sets (npm_config_registry would override the projects' .npmrc and its local registry).
 */
const CLEAN_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm|pnpm)_(config|package|lifecycle)_/i.test(k)));

/** Runs a command, returns its output; throws with the output's tail when it fails. */
function run(cmd, argv, { cwd, env = {}, quiet = true } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd, env: { ...CLEAN_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const collect = (chunk) => {
      out += chunk;
      if (!quiet) process.stdout.write(chunk);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`\`${cmd} ${argv.join(' ')}\` (in ${cwd}) exited with ${code}:\n${out.split('\n').slice(-40).join('\n')}`));
    });
  });
}

const bin = (name) => join(BIN, name);
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const writeJson = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

// Consumers install `webgpu` (Dawn) themselves, at the version the workspace tests with.
const WEBGPU = readJson(join(ROOT, 'packages/core/package.json')).devDependencies.webgpu;
const REQUIRED_VALUES = requiredValues(await import(pathToFileURL(join(ROOT, 'packages/core/dist/index.js')).href));
const GENERIC = new Set(['HostArrayOf', 'KeysInput']);
const TSC_FLAGS = ['--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext'];

const publishable = workspacePackages().filter((p) => !readJson(join(ROOT, p.dir, 'package.json')).private);
const tables = tablePackages();
const work = mkdtempSync(join(tmpdir(), 'gpuhash-release-check-'));
let registry;
let failed = false;

try {
  log(`temp folder ${work}; packages: ${publishable.map((p) => p.name).join(', ')}`);

  const repo = join(work, 'repo');
  const versions = await step('changeset version --snapshot (in a temp copy)', async () => {
    for (const p of publishable) {
      const dir = join(ROOT, p.dir);
      if (!existsSync(join(dir, 'dist', 'index.js'))) throw new Error(`${p.dir}/dist is missing: run \`pnpm build\` first`);
      const to = join(repo, p.dir);
      mkdirSync(to, { recursive: true });
      for (const f of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist']) {
        if (existsSync(join(dir, f))) cpSync(join(dir, f), join(to, f), { recursive: true });
      }
    }
    const root = readJson(join(ROOT, 'package.json'));
    writeJson(join(repo, 'package.json'), { name: 'gpuhash-release', private: true, packageManager: root.packageManager });
    writeFileSync(join(repo, 'pnpm-workspace.yaml'), 'packages:\n  - packages/*\n');
    mkdirSync(join(repo, '.changeset'));
    const names = new Set(publishable.map((p) => p.name));
    const config = readJson(join(ROOT, '.changeset/config.json'));
    // Only the publishable packages are copied; the private ones config.json ignores are not here.
    config.ignore = (config.ignore ?? []).filter((n) => names.has(n));
    writeJson(join(repo, '.changeset/config.json'), config);
    for (const f of readdirSync(join(ROOT, '.changeset'))) {
      if (f.endsWith('.md') && f !== 'README.md') cpSync(join(ROOT, '.changeset', f), join(repo, '.changeset', f));
    }
    // Always something to release, pending changesets or not.
    const bumps = publishable.map((p) => `'${p.name}': patch`).join('\n');
    writeFileSync(join(repo, '.changeset', `${TAG}.md`), `---\n${bumps}\n---\n\nRelease check.\n`);
    await run(bin('changeset'), ['version', '--snapshot', TAG], { cwd: repo });
    const out = {};
    for (const p of publishable) out[p.name] = readJson(join(repo, p.dir, 'package.json')).version;
    const distinct = new Set(Object.values(out));
    if (distinct.size !== 1 || !/-release-check/.test([...distinct][0])) throw new Error(`unexpected versions: ${JSON.stringify(out)}`);
    log(`  version ${[...distinct][0]}`);
    return out;
  });

  registry = await step('start Verdaccio on 127.0.0.1', () => startRegistry({ dir: join(work, 'registry'), verdaccio: bin('verdaccio') }));
  log(`  ${registry.url} (upstream ${registry.upstream})`);
  const npmrc = `registry=${registry.url}\n${registry.url.replace(/^https?:/, '')}:_authToken=${registry.token}\n`;

  await step('changeset publish to the local registry', async () => {
    writeFileSync(join(repo, '.npmrc'), npmrc);
    // pnpm publish reads the versions behind `workspace:` ranges from node_modules: link the
    // workspace packages as `pnpm install` would (no install: nothing else is needed to publish).
    const ids = Object.fromEntries(publishable.map((p) => [p.name, p.dir]));
    for (const p of publishable) {
      const manifest = readJson(join(repo, p.dir, 'package.json'));
      for (const [dep, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
        if (!String(range).startsWith('workspace:')) continue;
        const link = join(repo, p.dir, 'node_modules', dep);
        mkdirSync(dirname(link), { recursive: true });
        symlinkSync(join(repo, ids[dep]), link, 'dir');
      }
    }
    await run(bin('changeset'), ['publish', '--tag', TAG, '--no-git-tag'], {
      cwd: repo,
      env: { npm_config_registry: registry.url },
    });
    for (const [name, version] of Object.entries(versions)) {
      const res = await fetch(`${registry.url}${name.replace('/', '%2f')}`);
      const meta = res.ok ? await res.json() : {};
      if (!meta.versions?.[version]) throw new Error(`${name}@${version} is not on the registry after publishing`);
      const files = await tarballFiles(meta.versions[version].dist.tarball, join(work, 'tarballs'));
      for (const need of [
        'package/LICENSE',
        'package/README.md',
        'package/package.json',
        'package/dist/index.js',
        'package/dist/index.d.ts',
      ]) {
        if (!files.includes(need)) throw new Error(`${name}@${version}'s tarball lacks ${need.slice(8)}`);
      }
      const manifest = meta.versions[version];
      const deps = Object.values(manifest.dependencies ?? {});
      if (deps.some((d) => String(d).startsWith('workspace:'))) throw new Error(`${name} was published with workspace: ranges`);
    }
    log(`  published ${Object.keys(versions).length} packages, each tarball with LICENSE, README, dist`);
  });

  const spec = (name) => `${name}@${versions[name]}`;
  const example = readFileSync(join(HERE, 'example', 'example.ts'), 'utf8');
  const tablesProgram = tablesSource();
  const nodeEnv = { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp' };

  const managers = {
    npm: (cwd, pkgs) => run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...pkgs], { cwd }),
    pnpm: (cwd, pkgs) => run('pnpm', ['add', '--reporter=append-only', '--config.confirmModulesPurge=false', ...pkgs], { cwd }),
  };
  const apps = {};
  for (const [pm, install] of Object.entries(managers)) {
    const app = join(work, `${pm}-app`);
    apps[pm] = app;
    mkdirSync(app);
    writeJson(join(app, 'package.json'), { name: `${pm}-app`, version: '1.0.0', private: true, type: 'module' });
    writeFileSync(join(app, '.npmrc'), npmrc);
    writeFileSync(join(app, 'example.ts'), example);

    await step(`${pm}: install @gpuhash/hive and webgpu`, () => install(app, [spec('@gpuhash/hive'), `webgpu@${WEBGPU}`]));
    const direct = Object.keys(readJson(join(app, 'package.json')).dependencies ?? {}).filter((n) => n.startsWith('@gpuhash/'));
    if (direct.join() !== '@gpuhash/hive') throw new Error(`${pm}: expected only @gpuhash/hive as a dependency, got ${direct.join(', ')}`);
    await step(`${pm}: tsc ${TSC_FLAGS.join(' ')} example.ts`, () => run(bin('tsc'), [...TSC_FLAGS, 'example.ts'], { cwd: app }));
    await step(`${pm}: node example.js (SwiftShader or a GPU)`, async () => {
      const out = await run(process.execPath, ['example.js'], { cwd: app, env: nodeEnv });
      if (!out.includes('example: ok')) throw new Error(`the example did not report ok:\n${out}`);
      log(`  ${out.slice(out.indexOf('example: ok')).trim().split('\n').slice(1).join(' |')}`);
    });

    const others = tables.filter((t) => t.name !== '@gpuhash/hive').map((t) => spec(t.name));
    await step(`${pm}: install every table package (${tables.map((t) => t.id).join(', ')})`, () => install(app, others));
    writeFileSync(join(app, 'tables.ts'), tablesProgram);
    await step(`${pm}: tsc ${TSC_FLAGS.join(' ')} tables.ts`, () => run(bin('tsc'), [...TSC_FLAGS, 'tables.ts'], { cwd: app }));
    await step(`${pm}: node tables.js`, async () => {
      const out = await run(process.execPath, ['tables.js'], { cwd: app, env: nodeEnv });
      if (!out.includes('tables: ok')) throw new Error(`the tables program did not report ok:\n${out}`);
      log(`  ${out.trim().split('\n').at(-1)}`);
    });
  }

  if (browser) {
    const app = apps.npm;
    const site = join(work, 'site');
    await step('esbuild: browser bundles of example.ts and tables.ts', async () => {
      const esbuild = await import('esbuild');
      for (const entry of ['example', 'tables']) {
        const outdir = join(site, `esbuild-${entry}`);
        const result = await esbuild.build({
          entryPoints: [join(app, `${entry}.ts`)],
          absWorkingDir: app,
          bundle: true,
          platform: 'browser',
          format: 'esm',
          target: 'es2022',
          outfile: join(outdir, 'main.js'),
          logLevel: 'silent',
          metafile: true,
        });
        assertNoNodeBuiltins(`esbuild ${entry}`, Object.keys(result.metafile.inputs));
        writeFileSync(join(outdir, 'index.html'), page('<script type="module" src="./main.js"></script>'));
      }
    });
    await step('vite build: browser bundle of example.ts', async () => {
      const { build } = await import('vite');
      writeFileSync(join(app, 'index.html'), page('<script type="module" src="/example.ts"></script>'));
      const inputs = [];
      await build({
        root: app,
        base: './',
        configFile: false,
        logLevel: 'warn',
        plugins: [{ name: 'record-inputs', load: (id) => void inputs.push(id) }],
        build: { outDir: join(site, 'vite-example'), emptyOutDir: true, target: 'es2022' },
      });
      assertNoNodeBuiltins('vite', inputs);
    });
    await step('webpack: browser bundle of example.js (as tsc emitted it)', async () => {
      const { default: webpack } = await import('webpack');
      const outdir = join(site, 'webpack-example');
      const inputs = [];
      const compiler = webpack({
        context: app,
        entry: './example.js',
        target: 'web',
        mode: 'production',
        devtool: false,
        // No Node polyfills or fallbacks (webpack 5 has none by default): a Node built-in reached
        // from the browser build fails the build.
        resolve: { fallback: {} },
        output: { path: outdir, filename: 'main.js', publicPath: '', clean: true },
        performance: { hints: false },
        infrastructureLogging: { level: 'error' },
        plugins: [
          {
            apply: (c) =>
              c.hooks.compilation.tap('record-inputs', (compilation) =>
                compilation.hooks.succeedModule.tap('record-inputs', (m) => void inputs.push(m.resource ?? m.identifier())),
              ),
          },
        ],
      });
      const stats = await new Promise((resolve, reject) => compiler.run((err, s) => (err ? reject(err) : resolve(s))));
      await new Promise((resolve) => compiler.close(resolve));
      if (stats.hasErrors() || stats.hasWarnings()) {
        throw new Error(`webpack: the build reported problems:\n${stats.toString({ all: false, errors: true, warnings: true })}`);
      }
      assertNoNodeBuiltins('webpack', inputs);
      writeFileSync(join(outdir, 'index.html'), page('<script src="./main.js"></script>'));
    });
    await step('headless Chromium: load each bundle, check its answers', async () => {
      for (const name of ['esbuild-example', 'vite-example', 'webpack-example', 'esbuild-tables']) {
        const result = await loadInBrowser(site, `${name}/index.html`);
        if (!result?.ok) throw new Error(`${name}: ${result?.error ?? 'no result'}\n${(result?.console ?? []).join('\n')}`);
        log(`  ${name}: ok; ${result.lines.join(' | ')}`);
      }
    });
  }
} catch (e) {
  failed = true;
  console.error(`\n${e instanceof Error ? (e.stack ?? e.message) : e}\n`);
} finally {
  if (registry) await registry.stop();
  if (keep) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
console.log(`release check: ${failed ? 'FAIL' : 'PASS'} (${secs(Date.now() - started)})`);
process.exit(failed ? 1 : 0);

/** The files of a published tarball. */
async function tarballFiles(url, dir) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, url.split('/').at(-1));
  writeFileSync(file, Buffer.from(await (await fetch(url)).arrayBuffer()));
  return (await run('tar', ['-tzf', file], { cwd: dir })).split('\n').filter(Boolean);
}

function assertNoNodeBuiltins(what, inputs) {
  const bad = inputs.filter((id) =>
    /(^|[/\\])node_modules[/\\]webgpu[/\\]|^node:|^(fs|path|module|url|os)$|__vite-browser-external/.test(id),
  );
  if (bad.length > 0) throw new Error(`${what}: the browser bundle pulled in Node-only modules: ${bad.join(', ')}`);
  // The `browser` export condition picked core's browser build.
  if (!inputs.some((id) => /@gpuhash[/\\]core[/\\]dist[/\\]browser\.js$/.test(id))) {
    throw new Error(
      `${what}: the bundle does not use @gpuhash/core's browser build (dist/browser.js): ${inputs.filter((i) => i.includes('gpuhash')).join(', ')}`,
    );
  }
}

function page(script) {
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>gpuhash release check</title></head><body>${script}</body></html>\n`;
}

/** A program using every table package by its own exports only (from tools/workspace/packages.mjs). */
function tablesSource() {
  const lines = [
    '// Generated by the release check: every table package, used through its own exports only.',
    ...tables.map((t, i) => `import * as t${i} from '${t.name}';`),
    '',
    'const lines: string[] = [];',
    'let ok = false;',
    'try {',
  ];
  tables.forEach((t, i) => {
    const m = `t${i}`;
    lines.push(
      `  {`,
      `    // ${t.name}: what a user needs from core, re-exported`,
      ...REQUIRED_TYPES.map((name) => `    type _${name} = ${m}.${name}${GENERIC.has(name) ? "<'u32'>" : ''};`),
      `    const values: unknown[] = [${REQUIRED_VALUES.map((n) => `${m}.${n}`).join(', ')}];`,
      `    if (values.some((v) => v === undefined)) throw new Error('${t.name}: a re-export is undefined');`,
      `    const gpu: ${m}.Gpu = await ${m}.requestGpu({ allowSoftware: true, log: () => {} });`,
      `    const device: GPUDevice = gpu.device;`,
      `    const table: ${m}.Dictionary = await ${m}.${t.gpuhash.export}.create(gpu, { capacity: 4096 });`,
      '    const keys = new Uint32Array(1000).map((_, k) => k * 7 + 1);',
      '    await table.insert(keys, keys.map((k) => k ^ 0x5a5a));',
      `    const { values: got, found }: ${m}.FindResult = await table.find(new Uint32Array([...keys, 3, 5]));`,
      '    for (let k = 0; k < keys.length; k++) {',
      `      if (found[k] !== 1 || got[k] !== (keys[k]! ^ 0x5a5a)) throw new Error('${t.name}: wrong answer for key ' + keys[k]);`,
      '    }',
      `    if (found[keys.length] !== 0 || found[keys.length + 1] !== 0) throw new Error('${t.name}: found a key never inserted');`,
      `    if (!(new ${m}.InvalidArgumentError('x') instanceof ${m}.GpuhashError)) throw new Error('${t.name}: error classes');`,
      `    lines.push('${t.id}: 1000 inserted and found, ' + table.size + ' keys, ' + device.limits.maxBufferSize + '-byte buffers');`,
      '    table.destroy();',
      '    gpu.destroy();',
      '  }',
    );
  });
  lines.push(
    '  ok = true;',
    "  console.log('tables: ok; ' + lines.join('; '));",
    '} finally {',
    '  (globalThis as { gpuhashResult?: unknown }).gpuhashResult = { ok, lines };',
    '}',
    '',
  );
  return lines.join('\n');
}
