// Serves a folder on 127.0.0.1 (a secure context, as WebGPU needs) and loads a page in headless
// Chromium with WebGPU on (SwiftShader when there is no GPU); returns what the page reports in
// `globalThis.gpuhashResult`, with its console lines.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';

const TYPES = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
};

export const CHROMIUM = process.env.GPUHASH_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--use-webgpu-adapter=swiftshader',
  '--enable-unsafe-swiftshader',
];

function serve(root) {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^([/\\])+/, '');
    const file = join(root, path);
    if (!file.startsWith(root) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** @returns {Promise<{ ok: boolean, lines: string[], error?: string, console: string[] }>} */
export async function loadInBrowser(root, page, timeoutMs = 180_000) {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set GPUHASH_CHROMIUM)`);
  const server = await serve(root);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const consoleLines = [];
  try {
    const tab = await browser.newPage();
    tab.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    tab.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
    await tab.goto(`http://127.0.0.1:${server.address().port}/${page}`);
    await tab.waitForFunction(() => globalThis.gpuhashResult !== undefined, undefined, { timeout: timeoutMs });
    const result = await tab.evaluate(() => globalThis.gpuhashResult);
    return { ...result, console: consoleLines };
  } finally {
    await browser.close();
    server.close();
  }
}
