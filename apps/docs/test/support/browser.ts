import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium, installed by tools/setup.sh; GPUHASH_CHROMIUM points elsewhere. */
export const CHROMIUM = process.env.GPUHASH_CHROMIUM ?? '/usr/bin/chromium';

/** WebGPU on SwiftShader in headless Chromium, and no network beyond what the page asks of localhost. */
const FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--use-webgpu-adapter=swiftshader',
  '--enable-unsafe-swiftshader',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. The docs tests drive Debian's headless Chromium (WebGPU on SwiftShader): run \`bash tools/setup.sh\` (or \`apt-get install chromium\`), or set GPUHASH_CHROMIUM to a Chromium binary.`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

/** Everything a page did wrong: console errors, uncaught exceptions, failed or off-site requests. */
export interface PageProblems {
  console: string[];
  exceptions: string[];
  failedRequests: string[];
  badResponses: string[];
  offsite: string[];
}

export function emptyProblems(): PageProblems {
  return { console: [], exceptions: [], failedRequests: [], badResponses: [], offsite: [] };
}

/**
 * A context whose pages may only talk to the test server; anything else is recorded and aborted
 * (CI has no network, and the site must not need one). `withoutWebGpu` hides navigator.gpu, as
 * in a browser that does not ship WebGPU.
 */
export async function newSiteContext(
  browser: Browser,
  origin: string,
  options: { withoutWebGpu?: boolean } = {},
): Promise<{ context: BrowserContext; problems: PageProblems }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const problems = emptyProblems();
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    problems.offsite.push(url);
    return route.abort();
  });
  if (options.withoutWebGpu) {
    await context.addInitScript(() => {
      delete (Navigator.prototype as { gpu?: unknown }).gpu;
    });
  }
  context.on('page', (page) => watch(page, problems, origin));
  return { context, problems };
}

function watch(page: Page, problems: PageProblems, origin: string): void {
  page.on('console', (m) => {
    if (m.type() === 'error') problems.console.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.exceptions.push(`${page.url()}: ${e.message}`));
  page.on('requestfailed', (r) => {
    // Off-site requests are aborted on purpose and reported separately. A same-origin request
    // aborted by the browser is one still in flight when the page moved on: VitePress prefetches
    // linked pages' chunks when their links scroll into view, sometimes after 'networkidle' (seen
    // once in CI). A file that is really missing answers 404, which badResponses reports.
    const error = r.failure()?.errorText;
    if (r.url().startsWith(origin) && error !== 'net::ERR_ABORTED') problems.failedRequests.push(`${r.url()}: ${error}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.badResponses.push(`${r.status()} ${r.url()}`);
  });
}

/** Reads the number in a `data-value` attribute of the element with this data-testid. */
export async function readValue(page: Page, testId: string): Promise<number> {
  const raw = await page.getByTestId(testId).first().getAttribute('data-value');
  if (raw === null) throw new Error(`${testId} has no data-value`);
  return Number(raw);
}
