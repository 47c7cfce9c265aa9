import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guides } from '../../../tools/workspace/packages.mjs';
import { launchChromium, newSiteContext, type PageProblems, readValue } from './support/browser';
import { buildSite } from './support/build';
import { BENCH_RESULTS_DIR, SCREENSHOTS_DIR, SITE_DIR } from './support/paths';
import { type StaticSite, serveStatic } from './support/server';

// The built site in real headless Chromium, with WebGPU on SwiftShader: every page loads cleanly,
// and the playground's numbers are checked against values this test works out on its own.

const PAGES = [
  { path: '/', heading: 'gpuhash' },
  { path: '/getting-started.html', heading: 'Getting started' },
  { path: '/guides/linear-probe.html', heading: 'linear-probe' },
  { path: '/guides/hive.html', heading: 'hive' },
  { path: '/guides/slab.html', heading: 'slab' },
  { path: '/guides/hkv.html', heading: 'hkv' },
  { path: '/guides/horton.html', heading: 'horton' },
  { path: '/guides/core.html', heading: 'core' },
  { path: '/guides/kernels.html', heading: 'kernels' },
  { path: '/guides/sharding.html', heading: 'sharded' },
  { path: '/api/', heading: 'API reference' },
  { path: '/api/core.html', heading: '@gpuhash/core' },
  { path: '/api/kernels.html', heading: '@gpuhash/kernels' },
  { path: '/api/linear-probe.html', heading: '@gpuhash/linear-probe' },
  { path: '/api/slab.html', heading: '@gpuhash/slab' },
  { path: '/api/hkv.html', heading: '@gpuhash/hkv' },
  { path: '/benchmarks.html', heading: 'Benchmarks' },
  { path: '/playground.html', heading: 'Playground' },
];

let site: StaticSite;
let browser: Browser;

beforeAll(async () => {
  const build = await buildSite();
  console.log(build.reused ? 'docs: reusing the existing build' : `docs: site built in ${(build.ms / 1000).toFixed(1)}s`);
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  site = await serveStatic(SITE_DIR);
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

function expectClean(problems: PageProblems): void {
  expect(problems, 'console errors, exceptions, failed/4xx requests or off-site requests').toEqual({
    console: [],
    exceptions: [],
    failedRequests: [],
    badResponses: [],
    offsite: [],
  });
}

async function open(page: Page, path: string): Promise<void> {
  // networkidle: VitePress prefetches the pages linked from this one; leaving before they arrive
  // would abort them and blur real failures.
  const response = await page.goto(`${site.url}${path}`, { waitUntil: 'networkidle' });
  expect(response?.status(), `HTTP status of ${path}`).toBe(200);
  // Hydration done: VitePress's client has taken over the page.
  await page.waitForFunction(() => Boolean(document.querySelector('#app')?.hasChildNodes()));
}

async function shoot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS_DIR}/${name}.png`, fullPage });
}

describe('the docs site in Chromium', () => {
  it('serves every main page with status 200, no console errors and no off-site requests', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    for (const { path, heading } of PAGES) {
      await open(page, path);
      await expect.poll(() => page.locator('h1').first().textContent(), { message: `h1 of ${path}` }).toContain(heading);
    }
    await open(page, '/');
    await shoot(page, 'home');
    await open(page, '/api/linear-probe.html');
    await shoot(page, 'api-linear-probe', false); // the reference is long: its first screen
    await context.close();
    expectClean(problems);
  });

  it('claims only what was measured on the home page, and links the repository and npm', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/');
    const text = (await page.locator('.VPContent').textContent()) ?? '';
    // What has run is named as such; vendors not yet run are "expected", never listed as working.
    expect(text).toMatch(/NVIDIA H200/);
    expect(text).toMatch(/SwiftShader/);
    expect(text).toMatch(/AMD, Intel and Apple GPUs are expected to work/);
    expect(text).not.toMatch(/on NVIDIA, AMD, Intel and Apple GPUs/);
    for (const sentence of text.split(/(?<=[.:])\s/)) {
      if (/\b(AMD|Intel|Apple)\b/.test(sentence)) expect(sentence, sentence).toMatch(/expected|not (been )?run yet/);
    }
    const hrefs = await page.locator('a[href]').evaluateAll((as) => as.map((a) => [(a as HTMLAnchorElement).href, a.textContent ?? '']));
    expect(hrefs.some(([href]) => href === 'https://github.com/gpuhash/gpuhash')).toBe(true);
    const npm = hrefs.filter(([href]) => href === 'https://www.npmjs.com/org/gpuhash');
    expect(npm.length).toBeGreaterThan(0);
    for (const [, label] of npm) expect(label).toContain('not yet published');
    await context.close();
    expectClean(problems);
  });

  it('shows examples in the API reference for the main entry points', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    const expectations: [string, string[]][] = [
      ['/api/core.html', ['requestGpu()', 'table.insert(', 'table.find(', 'table.erase(', 'Op.insert']],
      ['/api/linear-probe.html', ['LinearProbeTable.create(gpu']],
      ['/api/hive.html', ['HiveTable.create(gpu']],
      ['/api/slab.html', ['SlabHashMap.create(gpu']],
      ['/api/horton.html', ['HortonTable.create(gpu']],
    ];
    for (const [path, snippets] of expectations) {
      await open(page, path);
      expect(await page.locator('h4, h5, h6', { hasText: /Example/ }).count(), path).toBeGreaterThan(0);
      const code = (await page.locator('div[class*="language-"] pre').allTextContents()).join('\n');
      for (const snippet of snippets) expect(code, `${path}: ${snippet}`).toContain(snippet);
    }
    await context.close();
    expectClean(problems);
  });

  it('links every page of the sidebar to a page that exists', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/getting-started.html');
    const links = await page.locator('.VPSidebar a[href]').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
    expect(links.length).toBeGreaterThanOrEqual(10);
    for (const href of new Set(links)) {
      const response = await page.request.get(href);
      expect(response.status(), href).toBe(200);
    }
    await context.close();
    expectClean(problems);
  });

  it('runs the playground on SwiftShader and shows exactly the right numbers', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/playground.html');
    const playground = page.getByTestId('playground');
    await expect.poll(() => playground.getAttribute('data-state')).toBe('idle');

    const capacity = 1 << 12;
    const n = 1 << 11;
    const run = async (workload: string, table = 'linear-probe') => {
      await page.getByTestId('pg-table').selectOption(table);
      await page.getByTestId('pg-capacity').selectOption(String(capacity));
      await page.getByTestId('pg-workload').selectOption(workload);
      await page.getByTestId('pg-size').fill(String(n));
      await page.getByTestId('pg-run').click();
      await expect.poll(() => playground.getAttribute('data-state'), { timeout: 90_000 }).toMatch(/done|error/);
      const error = (await page.getByTestId('pg-error').count()) ? await page.getByTestId('pg-error').textContent() : '';
      expect(error, `${workload} failed`).toBe('');
      return {
        capacity: await readValue(page, 'pg-capacity-result'),
        size: await readValue(page, 'pg-size-result'),
        load: await readValue(page, 'pg-load'),
        found: await readValue(page, 'pg-found'),
        expectedFound: await readValue(page, 'pg-expected-found'),
        mismatches: await readValue(page, 'pg-mismatches'),
        ops: await readValue(page, 'pg-ops'),
        throughput: await readValue(page, 'pg-throughput'),
        points: Number(await page.getByTestId('pg-chart').getAttribute('data-points')),
        loadText: (await page.getByTestId('pg-load').textContent()) ?? '',
      };
    };

    // Bulk insert of n keys into C slots: every key found afterwards, load n / C exactly.
    const insert = await run('insert');
    expect(insert).toMatchObject({ capacity, size: n, load: n / capacity, found: n, expectedFound: n, mismatches: 0, ops: n, points: 16 });
    expect(insert.loadText).toContain('0.5000');
    expect(insert.throughput).toBeGreaterThan(0);

    const hits = await run('find-hits');
    expect(hits).toMatchObject({ capacity, size: n, load: 0.5, found: n, expectedFound: n, mismatches: 0, ops: n, points: 16 });
    await shoot(page, 'playground-find-hits');

    const misses = await run('find-misses');
    expect(misses).toMatchObject({ capacity, size: n, load: 0.5, found: 0, expectedFound: 0, mismatches: 0, ops: n, points: 16 });

    // Mixed: n/2 keys first, then 16 batches of n/16 ops: 30% finds and 20% erases (rounded
    // down) of present keys, the rest inserts of new keys.
    const batch = n / 16;
    const finds = Math.floor(0.3 * batch);
    const erases = Math.floor(0.2 * batch);
    const inserts = batch - finds - erases;
    const live = n / 2 + 16 * (inserts - erases);
    const mixed = await run('mixed');
    expect(mixed).toMatchObject({
      capacity,
      size: live,
      load: live / capacity,
      found: 16 * finds,
      expectedFound: 16 * finds,
      mismatches: 0,
      ops: n,
    });
    await shoot(page, 'playground-mixed');

    // The same workloads on Hive: the numbers do not depend on the design.
    const hive = { capacity, mismatches: 0, ops: n };
    expect(await run('insert', 'hive')).toMatchObject({ ...hive, size: n, load: 0.5, found: n, expectedFound: n });
    expect(await run('find-hits', 'hive')).toMatchObject({ ...hive, size: n, found: n, expectedFound: n });
    expect(await run('find-misses', 'hive')).toMatchObject({ ...hive, size: n, found: 0, expectedFound: 0 });
    expect(await run('mixed', 'hive')).toMatchObject({ ...hive, size: live, found: 16 * finds, expectedFound: 16 * finds });
    await shoot(page, 'playground-hive-mixed');

    // And on SlabHash, whose capacity option is the keys expected: the table's capacity counts the
    // entry slots of its base slabs and pool (15 a slab in a map), so the load follows from it.
    const slab = { mismatches: 0, ops: n };
    const slabInsert = await run('insert', 'slab');
    expect(slabInsert).toMatchObject({ ...slab, size: n, found: n, expectedFound: n });
    expect(slabInsert.capacity % 15).toBe(0);
    expect(slabInsert.capacity).toBeGreaterThan(n);
    expect(slabInsert.load).toBeCloseTo(n / slabInsert.capacity, 6);
    expect(await run('find-hits', 'slab')).toMatchObject({ ...slab, size: n, found: n, expectedFound: n });
    expect(await run('find-misses', 'slab')).toMatchObject({ ...slab, size: n, found: 0, expectedFound: 0 });
    expect(await run('mixed', 'slab')).toMatchObject({ ...slab, size: live, found: 16 * finds, expectedFound: 16 * finds });
    await shoot(page, 'playground-slab-mixed');

    await context.close();
    expectClean(problems);
  });

  it('labels each run, locks the form while it runs, says when it compiles shaders, and can cancel', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/playground.html');
    const playground = page.getByTestId('playground');
    await expect.poll(() => playground.getAttribute('data-state')).toBe('idle');
    // Every phase the page shows, recorded as it happens (compiling may last well under a second).
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { phases: string[] }).phases = seen;
      new MutationObserver(() => {
        const phase = document.querySelector('[data-testid="pg-phase"]')?.getAttribute('data-phase');
        if (phase && seen.at(-1) !== phase) seen.push(phase);
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    const phases = async () => {
      const seen = await page.evaluate(() => (window as unknown as { phases: string[] }).phases.splice(0));
      return seen;
    };
    const controls = ['pg-table', 'pg-capacity', 'pg-workload', 'pg-size'];
    const locked = async () => Promise.all(controls.map((id) => page.getByTestId(id).isDisabled()));
    const choose = async (capacity: number, workload: string, size: number) => {
      await page.getByTestId('pg-table').selectOption('linear-probe');
      await page.getByTestId('pg-capacity').selectOption(String(capacity));
      await page.getByTestId('pg-workload').selectOption(workload);
      await page.getByTestId('pg-size').fill(String(size));
    };
    const label = page.getByTestId('pg-run-label');

    // The first run of a table on this device compiles its pipelines, and says so.
    await choose(4096, 'insert', 2048);
    await page.getByTestId('pg-run').click();
    expect(await locked()).toEqual([true, true, true, true]);
    expect(await page.getByTestId('pg-run').isDisabled()).toBe(true);
    await expect.poll(() => playground.getAttribute('data-state'), { timeout: 90_000 }).toBe('done');
    expect(await phases()).toEqual(['device', 'compiling', 'running']);
    expect(await locked()).toEqual([false, false, false, false]);
    expect(await page.getByTestId('pg-cancel').count()).toBe(0);
    expect(await label.getAttribute('data-table')).toBe('linear-probe');
    expect(await label.getAttribute('data-capacity')).toBe('4096');
    expect(await label.getAttribute('data-workload')).toBe('insert');
    expect(await label.getAttribute('data-size')).toBe('2048');
    const text = (await label.textContent()) ?? '';
    for (const part of ['linear-probe', '4,096', 'bulk insert', '2,048', 'keys inserted']) expect(text).toContain(part);
    expect(await page.getByTestId('pg-compiled').count()).toBe(1);

    // The second run of the same table reuses them; the label follows what ran, not the form.
    await choose(4096, 'find-hits', 1024);
    await page.getByTestId('pg-run').click();
    await expect.poll(() => playground.getAttribute('data-state'), { timeout: 90_000 }).toBe('done');
    expect(await phases()).toEqual(['device', 'running']);
    expect(await page.getByTestId('pg-compiled').count()).toBe(0);
    expect(await label.getAttribute('data-workload')).toBe('find-hits');
    await page.getByTestId('pg-capacity').selectOption(String(8192));
    expect(await label.getAttribute('data-capacity')).toBe('4096');
    expect(await label.textContent()).toContain('find hits');

    // A large run, cancelled once it is under way: it stops at a batch boundary and the form unlocks.
    await choose(1 << 22, 'insert', 1 << 21);
    await page.getByTestId('pg-run').click();
    await expect.poll(() => page.getByTestId('pg-phase').getAttribute('data-phase'), { timeout: 30_000 }).toBe('running');
    expect(await locked()).toEqual([true, true, true, true]);
    await page.getByTestId('pg-cancel').click();
    await expect.poll(() => playground.getAttribute('data-state'), { timeout: 90_000 }).toBe('cancelled');
    expect(await page.getByTestId('pg-cancelled').textContent()).toMatch(/Cancelled after \d+ of 16 batches/);
    expect(await page.getByTestId('pg-error').count()).toBe(0);
    expect(await locked()).toEqual([false, false, false, false]);
    expect(await label.getAttribute('data-capacity')).toBe(String(1 << 22));
    await shoot(page, 'playground-cancelled');

    // And the playground runs again after a cancel.
    await choose(4096, 'insert', 2048);
    await page.getByTestId('pg-run').click();
    await expect.poll(() => playground.getAttribute('data-state'), { timeout: 90_000 }).toBe('done');
    expect(await readValue(page, 'pg-mismatches')).toBe(0);
    await context.close();
    expectClean(problems);
  });

  it('runs the live example embedded in the linear-probe guide', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/guides/linear-probe.html');
    const example = page.getByTestId('playground');
    await expect.poll(() => example.getAttribute('data-state')).toBe('idle');
    await example.getByTestId('pg-run').click();
    await expect.poll(() => example.getAttribute('data-state'), { timeout: 90_000 }).toBe('done');
    expect(await readValue(page, 'pg-found')).toBe(2048);
    expect(await readValue(page, 'pg-mismatches')).toBe(0);
    expect(await readValue(page, 'pg-load')).toBe(0.5);
    await shoot(page, 'guide-linear-probe');
    await page.locator('.probe-diagram').screenshot({ path: `${SCREENSHOTS_DIR}/guide-probe-diagram.png` });
    await example.screenshot({ path: `${SCREENSHOTS_DIR}/guide-live-example.png` });
    await context.close();
    expectClean(problems);
  });

  it('runs the live example embedded in the hive guide', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/guides/hive.html');
    const example = page.getByTestId('playground');
    await expect.poll(() => example.getAttribute('data-state')).toBe('idle');
    await example.getByTestId('pg-run').click();
    await expect.poll(() => example.getAttribute('data-state'), { timeout: 90_000 }).toBe('done');
    // 3,840 keys inserted into 4,096 slots (128 buckets, growth off), then every one looked up.
    expect(await readValue(page, 'pg-capacity-result')).toBe(4096);
    expect(await readValue(page, 'pg-size-result')).toBe(3840);
    expect(await readValue(page, 'pg-found')).toBe(3840);
    expect(await readValue(page, 'pg-expected-found')).toBe(3840);
    expect(await readValue(page, 'pg-mismatches')).toBe(0);
    expect(await readValue(page, 'pg-load')).toBe(0.9375);
    await shoot(page, 'guide-hive');
    await page.locator('.hive-diagram').screenshot({ path: `${SCREENSHOTS_DIR}/guide-hive-diagram.png` });
    await example.screenshot({ path: `${SCREENSHOTS_DIR}/guide-hive-live-example.png` });
    await context.close();
    expectClean(problems);
  });

  it('runs the live example embedded in the horton guide', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/guides/horton.html');
    const example = page.getByTestId('playground');
    await expect.poll(() => example.getAttribute('data-state')).toBe('idle');
    await example.getByTestId('pg-run').click();
    await expect.poll(() => example.getAttribute('data-state'), { timeout: 90_000 }).toBe('done');
    // 3,584 keys inserted into 4,096 slots (512 buckets, growth off), then every one looked up.
    expect(await readValue(page, 'pg-capacity-result')).toBe(4096);
    expect(await readValue(page, 'pg-size-result')).toBe(3584);
    expect(await readValue(page, 'pg-found')).toBe(3584);
    expect(await readValue(page, 'pg-expected-found')).toBe(3584);
    expect(await readValue(page, 'pg-mismatches')).toBe(0);
    expect(await readValue(page, 'pg-load')).toBe(0.875);
    await shoot(page, 'guide-horton');
    await context.close();
    expectClean(problems);
  });

  it('runs the cache example embedded in the hkv guide: every policy, every value checked', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/guides/hkv.html');
    const example = page.getByTestId('cache-playground');
    await expect.poll(() => example.getAttribute('data-state')).toBe('idle');
    await example.getByTestId('cpg-run').click();
    await expect.poll(() => example.getAttribute('data-state'), { timeout: 120_000 }).toBe('done');
    // 32 batches of 512 Zipf keys (4,096 slots, a universe of 40,960) per policy, found then inserted.
    const rows = await example.getByTestId('cpg-row').evaluateAll((trs) =>
      trs.map((tr) => {
        const d = (tr as HTMLElement).dataset;
        const n = (k: string) => Number(d[k]);
        return {
          policy: d.policy ?? '',
          lookups: n('lookups'),
          hits: n('hits'),
          inserted: n('inserted'),
          updated: n('updated'),
          evicted: n('evicted'),
          size: n('size'),
          mismatches: n('mismatches'),
        };
      }),
    );
    expect(rows.map((r) => r.policy)).toEqual(['lru', 'lfu', 'epochLru', 'epochLfu']);
    for (const r of rows) {
      expect(r.lookups, r.policy).toBe(32 * 512);
      expect(r.mismatches, r.policy).toBe(0);
      // The cache grows only by keys placed in free slots; it fills, then evicts.
      expect(r.size, r.policy).toBe(r.inserted);
      expect(r.size, r.policy).toBeLessThanOrEqual(4096);
      expect(r.size, r.policy).toBeGreaterThan(0.6 * 4096);
      expect(r.evicted, r.policy).toBeGreaterThan(0);
      expect(r.inserted + r.updated + r.evicted, r.policy).toBeLessThanOrEqual(r.lookups);
      // Zipf 0.99 over 10x the capacity: most lookups hit once the cache is warm (about 70% for LRU).
      expect(r.hits / r.lookups, r.policy).toBeGreaterThan(0.4);
      expect(r.hits / r.lookups, r.policy).toBeLessThan(0.9);
    }
    await example.screenshot({ path: `${SCREENSHOTS_DIR}/guide-hkv-cache-example.png` });
    await context.close();
    expectClean(problems);
  });

  it('runs the live example embedded in the slab guide, and draws its slab list', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/guides/slab.html');
    const example = page.getByTestId('playground');
    await expect.poll(() => example.getAttribute('data-state')).toBe('idle');
    await example.getByTestId('pg-run').click();
    await expect.poll(() => example.getAttribute('data-state'), { timeout: 90_000 }).toBe('done');
    // 3,686 keys inserted into a map created for 4,096 (growth on), then every one looked up. The
    // map's capacity is the entry slots of its base slabs and pool: 15 a slab.
    const capacity = await readValue(page, 'pg-capacity-result');
    expect(capacity % 15).toBe(0);
    expect(capacity).toBeGreaterThan(3686);
    expect(await readValue(page, 'pg-size-result')).toBe(3686);
    expect(await readValue(page, 'pg-found')).toBe(3686);
    expect(await readValue(page, 'pg-expected-found')).toBe(3686);
    expect(await readValue(page, 'pg-mismatches')).toBe(0);
    expect(await readValue(page, 'pg-load')).toBeCloseTo(3686 / capacity, 6);
    // The diagram: three slabs of 32 words, linked by their next words, and the pool below.
    const diagram = page.locator('.slab-diagram svg');
    expect(await diagram.getAttribute('role')).toBe('img');
    const label = (await diagram.getAttribute('aria-label')) ?? '';
    for (const part of ['15 key-value pairs', 'next word', 'tombstone', 'EMPTY, 0xFFFFFFFF', 'resident block', 'atomicOr']) {
      expect(label, part).toContain(part);
    }
    expect(await page.locator('.slab-diagram rect.word').count()).toBe(3 * 32 + 6); // three slabs, and the legend's six
    expect(await page.locator('.slab-diagram rect.word.next').count()).toBe(3 + 1);
    expect(await page.locator('.slab-diagram rect.word.tomb').count()).toBe(2 + 1); // one pair's key and value words
    await shoot(page, 'guide-slab');
    await page.locator('.slab-diagram').screenshot({ path: `${SCREENSHOTS_DIR}/guide-slab-diagram.png` });
    await example.screenshot({ path: `${SCREENSHOTS_DIR}/guide-slab-live-example.png` });
    await context.close();
    expectClean(problems);
  });

  it('renders every guide the package registry lists, with its diagrams described for screen readers', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    const listed = guides();
    expect(listed.map((g) => g.link)).toContain('/guides/slab');
    for (const { text, link } of listed) {
      await open(page, `${link}.html`);
      const id = text.split(':')[0] ?? text;
      await expect.poll(() => page.locator('h1').first().textContent(), { message: `h1 of ${link}` }).toContain(id);
      // The guide is in the sidebar, under Guides.
      const sidebar = await page
        .locator('.VPSidebar a[href]')
        .evaluateAll((as) => as.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
      expect(
        sidebar.some((p) => p.replace(/\.html$/, '') === link),
        `${link} in the sidebar`,
      ).toBe(true);
      for (const svg of await page.locator('.vp-doc figure svg').all()) {
        expect(await svg.getAttribute('role'), link).toBe('img');
        expect(((await svg.getAttribute('aria-label')) ?? '').length, link).toBeGreaterThan(40);
      }
    }
    await context.close();
    expectClean(problems);
  });

  it('runs the live examples of the core and kernels guides', async () => {
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/guides/core.html');
    const device = page.getByTestId('device-info');
    await expect.poll(() => device.getAttribute('data-state')).toBe('idle');
    await page.getByTestId('device-detect').click();
    await expect.poll(() => device.getAttribute('data-state'), { timeout: 60_000 }).toBe('done');
    expect((await page.getByTestId('device-description').textContent())?.toLowerCase()).toContain('swiftshader');
    expect(await page.getByTestId('device-software').textContent()).toBe('true');

    await open(page, '/guides/kernels.html');
    const twins = page.getByTestId('twin-check');
    for (const hash of ['fmix32', 'jenkins', 'xxhash32']) {
      await expect.poll(() => twins.getAttribute('data-state')).toMatch(/idle|done/);
      await page.getByTestId('twin-hash').selectOption(hash);
      await page.getByTestId('twin-run').click();
      await expect.poll(() => twins.getAttribute('data-state'), { timeout: 60_000 }).toBe('done');
      expect(await readValue(page, 'twin-mismatches'), `${hash}: GPU and CPU twin differ`).toBe(0);
    }
    await twins.screenshot({ path: `${SCREENSHOTS_DIR}/guide-kernels-twins.png` });
    await context.close();
    expectClean(problems);
  });

  it('says plainly when the browser has no WebGPU, and which browsers would work', async () => {
    const { context, problems } = await newSiteContext(browser, site.url, { withoutWebGpu: true });
    const page = await context.newPage();
    await open(page, '/playground.html');
    await expect.poll(() => page.getByTestId('playground').getAttribute('data-state')).toBe('unsupported');
    const message = (await page.getByTestId('playground').getByTestId('pg-no-webgpu').textContent()) ?? '';
    expect(message).toContain('WebGPU is not available');
    // The cache playground below it says the same.
    await expect.poll(() => page.getByTestId('cache-playground').getAttribute('data-state')).toBe('unsupported');
    expect(await page.getByTestId('cache-playground').getByTestId('pg-no-webgpu').count()).toBe(1);
    expect(await page.getByTestId('cpg-run').count()).toBe(0);
    expect(message).toMatch(/Chrome/);
    expect(message).toMatch(/Safari/);
    expect(await page.getByTestId('pg-run').count()).toBe(0);
    await shoot(page, 'playground-no-webgpu');
    for (const guide of ['linear-probe', 'hive', 'slab', 'horton', 'hkv', 'core', 'kernels']) {
      await open(page, `/guides/${guide}.html`);
      await expect.poll(() => page.getByTestId('pg-no-webgpu').count(), { message: guide }).toBe(1);
    }
    await context.close();
    expectClean(problems);
  });

  it('renders the committed benchmark results, or says there are none yet', async () => {
    const files = readdirSafe(BENCH_RESULTS_DIR).filter((f) => f.endsWith('.json'));
    const { context, problems } = await newSiteContext(browser, site.url);
    const page = await context.newPage();
    await open(page, '/benchmarks.html');
    if (files.length === 0) {
      await expect.poll(() => page.getByTestId('bench-empty').textContent()).toContain('No committed results yet');
      expect(await page.getByTestId('bench-empty').textContent()).toContain('pnpm bench');
    } else {
      const runs = committedRuns(files);
      const newest = newestPerDevice(runs);
      expect(await page.getByTestId('bench-results').getAttribute('data-runs')).toBe(String(runs.length));
      const devices = page.getByTestId('bench-device');
      expect(await devices.count()).toBe(newest.size);
      for (const [device, run] of newest) {
        const section = page.locator(`[data-testid="bench-device"][data-device="${device}"]`);
        // By default: the newest run of the device, with its commit, date and driver.
        expect(await section.getAttribute('data-latest')).toBe(run.file);
        expect(await section.getByTestId('bench-run').getAttribute('data-file')).toBe(run.file);
        expect(await section.getByTestId('bench-commit').textContent()).toContain(run.json.git.revision);
        expect(await section.getByTestId('bench-date').textContent()).toContain(run.json.date);
        expect(await section.getByTestId('bench-driver').textContent()).toContain(run.json.device.driver);
        // Every result with a throughput appears as a row, with its number.
        expect(await shownRates(section)).toEqual(ratesOf(run.json));
        // Every chart draws the gather roofline, and tells its series apart.
        const charts = section.getByTestId('bench-chart');
        expect(await charts.count()).toBeGreaterThan(0);
        expect(await section.getByTestId('bench-roofline').count()).toBe(await charts.count());
        for (const chart of await charts.all()) {
          const styles = await chart
            .getByTestId('bench-series')
            .evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-colour')} ${g.getAttribute('data-dash')}`));
          expect(new Set(styles).size, `series styles of ${await chart.getAttribute('data-operation')}`).toBe(styles.length);
        }
      }
      // Only the newest runs are in the page: every row shown belongs to one of them.
      expect(await page.getByTestId('bench-row').count()).toBe([...newest.values()].reduce((n, r) => n + ratesOf(r.json).length, 0));
      await shoot(page, 'benchmarks');

      // An older run, chosen in the selector, is fetched as its own JSON and replaces the newest.
      const [device, latest] = [...newest][0] as [string, CommittedRun];
      const older = runs.filter((r) => r.json.device.description === device && r.file !== latest.file).at(-1);
      if (older) {
        const section = page.locator(`[data-testid="bench-device"][data-device="${device}"]`);
        const fetched = page.waitForResponse((r) => r.url().endsWith(`/bench/runs/${older.file}`));
        await section.getByTestId('bench-run-select').selectOption(older.file);
        expect((await fetched).status()).toBe(200);
        await expect.poll(() => section.getByTestId('bench-run').getAttribute('data-file')).toBe(older.file);
        expect(await section.getByTestId('bench-commit').textContent()).toContain(older.json.git.revision.replace(/-dirty$/, ''));
        expect(await shownRates(section)).toEqual(ratesOf(older.json));
        expect(await section.getByTestId('bench-roofline').count()).toBe(await section.getByTestId('bench-chart').count());
        await shoot(page, 'benchmarks-older-run');
        // Back to the newest: no fetch needed, it is in the page.
        await section.getByTestId('bench-run-select').selectOption(latest.file);
        await expect.poll(() => section.getByTestId('bench-run').getAttribute('data-file')).toBe(latest.file);
      }
    }
    await context.close();
    expectClean(problems);
  });

  it('keeps the benchmarks page small: older runs are separate files, not in the HTML', () => {
    const html = statSync(`${SITE_DIR}/benchmarks.html`).size;
    // 29 runs inlined made 1.8 MB; the newest run of one device is about 100 kB.
    expect(html, 'bytes of benchmarks.html').toBeLessThan(250_000);
    const chunks = readdirSync(`${SITE_DIR}/assets`).filter((f) => /^benchmarks\.md\..*\.js$/.test(f));
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) expect(statSync(`${SITE_DIR}/assets/${chunk}`).size, chunk).toBeLessThan(100_000);
    const files = readdirSafe(BENCH_RESULTS_DIR).filter((f) => f.endsWith('.json'));
    const assets = readdirSafe(`${SITE_DIR}/bench/runs`);
    expect(assets.sort()).toEqual(
      committedRuns(files)
        .map((r) => r.file)
        .sort(),
    );
  });
});

interface CommittedRun {
  file: string;
  json: {
    date: string;
    git: { revision: string };
    device: { description: string; driver: string };
    results?: { gops?: unknown }[];
  };
}

/** The committed result files, read here independently of the site's own reader. */
function committedRuns(files: string[]): CommittedRun[] {
  return files.map((file) => ({ file, json: JSON.parse(readFileSync(`${BENCH_RESULTS_DIR}${file}`, 'utf8')) as CommittedRun['json'] }));
}

function newestPerDevice(runs: CommittedRun[]): Map<string, CommittedRun> {
  const newest = new Map<string, CommittedRun>();
  for (const run of runs) {
    const best = newest.get(run.json.device.description);
    if (!best || run.json.date > best.json.date) newest.set(run.json.device.description, run);
  }
  return newest;
}

const numeric = (a: number, b: number) => a - b;

function ratesOf(json: CommittedRun['json']): number[] {
  return (json.results ?? [])
    .filter((r) => typeof r.gops === 'number')
    .map((r) => r.gops as number)
    .sort(numeric);
}

async function shownRates(section: Locator): Promise<number[]> {
  const shown = await section.getByTestId('bench-gops').evaluateAll((tds) => tds.map((td) => Number(td.getAttribute('data-value'))));
  return shown.sort(numeric);
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
