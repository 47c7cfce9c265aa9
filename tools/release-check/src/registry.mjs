// A throwaway Verdaccio: 127.0.0.1 only, storage in the given folder. @gpuhash/* is served from
// here alone (never proxied, so an install can only get what the check published); every other
// package is proxied from the upstream registry (npm's configured one, or GPUHASH_UPSTREAM_REGISTRY).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function upstreamRegistry() {
  if (process.env.GPUHASH_UPSTREAM_REGISTRY) return process.env.GPUHASH_UPSTREAM_REGISTRY;
  try {
    return execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim() || 'https://registry.npmjs.org/';
  } catch {
    return 'https://registry.npmjs.org/';
  }
}

/**
 * @param {{ dir: string, verdaccio: string }} options the folder for config, storage and log; Verdaccio's bin
 * @returns {Promise<{ url: string, upstream: string, token: string, stop: () => Promise<void> }>}
 */
export async function startRegistry({ dir, verdaccio }) {
  mkdirSync(join(dir, 'storage'), { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const upstream = upstreamRegistry();
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      `storage: ${join(dir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(dir, 'htpasswd')}`,
      '    max_users: 10',
      'uplinks:',
      '  upstream:',
      `    url: ${upstream}`,
      '    timeout: 120s',
      'packages:',
      "  '@gpuhash/*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      '    proxy: upstream',
      'web:',
      '  enable: false',
      'max_body_size: 100mb',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const logFile = join(dir, 'verdaccio.log');
  const out = openSync(logFile, 'a');
  const child = spawn(verdaccio, ['--config', config, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', out, out],
  });
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  const stop = () =>
    new Promise((resolve) => {
      if (exited) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`Verdaccio exited at start:\n${readFileSync(logFile, 'utf8')}`);
    try {
      if ((await fetch(`${url}-/ping`)).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Verdaccio did not answer on ${url} within 60 s:\n${readFileSync(logFile, 'utf8')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }

  // A user for publishing (npm and pnpm refuse to publish without a token).
  const res = await fetch(`${url}-/user/org.couchdb.user:release-check`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'release-check', password: 'release-check', type: 'user', roles: [], date: new Date().toISOString() }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok || !body.token) {
    await stop();
    throw new Error(`could not create a user on ${url}: ${res.status} ${JSON.stringify(body)}`);
  }
  return { url, upstream, token: body.token, stop };
}
