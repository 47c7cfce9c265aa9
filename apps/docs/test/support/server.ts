import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** The file a URL path names, the way static hosts resolve VitePress output (x -> x.html, x/ -> x/index.html). */
function resolveFile(root: string, urlPath: string): string | undefined {
  const path = normalize(decodeURIComponent(urlPath)).replace(/^(\.\.[/\\])+/, '');
  const candidates = path.endsWith('/')
    ? [join(root, path, 'index.html')]
    : [join(root, path), join(root, `${path}.html`), join(root, path, 'index.html')];
  return candidates.find((c) => c.startsWith(root) && existsSync(c) && statSync(c).isFile());
}

export interface StaticSite {
  url: string;
  close(): Promise<void>;
}

/** Serves a built site on 127.0.0.1 at a free port; unknown paths get the site's 404 page with status 404. */
export async function serveStatic(root: string): Promise<StaticSite> {
  const server: Server = createServer((req, res) => {
    const urlPath = new URL(req.url ?? '/', 'http://localhost').pathname;
    const file = resolveFile(root, urlPath);
    const status = file ? 200 : 404;
    const body = file ?? join(root, '404.html');
    res.writeHead(status, { 'content-type': TYPES[extname(body)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    createReadStream(body).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
