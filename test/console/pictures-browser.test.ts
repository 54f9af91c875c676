/**
 * Issue 33 in a real browser (Debian's chromium through playwright-core, as browser.test.ts): the
 * Overview's pictures and the batch's segmented bar, axe-clean, under the console's CSP (no
 * violation reported), nothing fetched from outside 127.0.0.1; each picture's numbers open in one
 * click and its CSV downloads in one; the pictures follow a new batch without a reload; the batch
 * list's small bars and the batch page's bar show failures apart from completions.
 * Screenshots go to test/artifacts/console/; with TOPUP_DOCS_SCREENSHOT=1 also to docs/.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, csv, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { startConsoleDaemon } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const ARTIFACTS = join(ROOT, 'test', 'artifacts', 'console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const available = existsSync(CHROMIUM);

releaseAfterEach();
let browser: Browser;

async function axe(page: Page, what: string): Promise<void> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const r = await (globalThis as unknown as { axe: { run: (o: unknown) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
  expect(violations, `accessibility of ${what}`).toEqual([]);
}

async function shot(page: Page, name: string, docs?: string, selector?: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const target = selector ? page.locator(selector).first() : page;
  await target.screenshot({ path: join(ARTIFACTS, `${name}.png`), ...(selector ? {} : { fullPage: true }) });
  if (docs && process.env.TOPUP_DOCS_SCREENSHOT === '1') await target.screenshot({ path: join(ROOT, 'docs', docs), ...(selector ? {} : { fullPage: true }) });
}

describe.skipIf(!available)('the pictures in a real browser (issue 33)', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('the Overview draws every picture from the store, axe-clean, numbers and CSV one click away, live; batches show failures in their bars', { timeout: 180_000 }, async () => {
    const t = await startConsoleDaemon({}, { fulfilment: { processingShare: 1, processingMs: [100, 600] } });
    const rows: (string | number)[][] = [['pid', 'userId', 'zoneId', 'sale price']];
    for (let i = 0; i < 8; i++) rows.push(['PUBG-60', String(5_123_400_000 + i), '', '1.40']);
    for (let i = 0; i < 5; i++) rows.push(['ML-172', String(123_456_700 + i), '2001', '4.20']);
    for (let i = 0; i < 4; i++) rows.push(['PUBG-60', '99999', '', '1.40']);
    t.home.drop('first.csv', csv(rows));
    await waitForResult(t.home, 'first');

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const outside: string[] = [];
    const cspErrors: string[] = [];
    await ctx.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname !== '127.0.0.1') {
        outside.push(url.href);
        return route.abort();
      }
      return route.continue();
    });
    const page = await ctx.newPage();
    page.on('console', (m) => {
      if (/Content.Security.Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
    });
    page.on('pageerror', (e) => cspErrors.push(`page error: ${e.message}`));

    await page.goto(`${t.url}/`);
    for (const id of ['pic-spend', 'pic-outcomes', 'pic-failures', 'pic-balance', 'pic-rate', 'pic-wait', 'pic-latency-0', 'pic-margin']) {
      await page.locator(`svg[data-chart="${id}"]`).waitFor({ state: 'visible', timeout: 15_000 });
      const box = await page.locator(`svg[data-chart="${id}"]`).boundingBox();
      expect(box!.width, id).toBeGreaterThan(250);
    }
    // What the spend picture draws: one bar segment per day and game, titled with its figure.
    const titles = await page.locator('svg[data-chart="pic-spend"] rect title').allTextContents();
    expect(titles.length).toBeGreaterThanOrEqual(2);
    const drawn = titles.reduce((s, x) => s + Math.round(Number(/: ([\d.]+)$/.exec(x)![1]) * 100), 0);
    const total = await page.locator('[data-total="spend"]').textContent();
    expect(drawn).toBe(Math.round(Number(total!.replace(' USD', '')) * 100));
    await axe(page, 'the Overview with its pictures');
    await shot(page, '20-overview-pictures', 'console-pictures.png', '.pictures-wrap');
    await shot(page, '21-spend', 'console-spend.png', '[data-picture="pic-spend"]');
    await shot(page, '22-failures', 'console-failures.png', '[data-picture="pic-failures"]');
    await shot(page, '23-latency', 'console-latency.png', '[data-picture="pic-latency"]');
    await shot(page, '24-margin', 'console-margin.png', '[data-picture="pic-margin"]');

    // Numbers one click away; the CSV one click away.
    const spend = page.locator('[data-picture="pic-spend"]');
    await spend.locator('summary').first().click();
    await expect.poll(() => spend.locator('table tfoot td').last().textContent()).toBe(total!.replace(' USD', ''));
    await axe(page, 'the Overview with a table open');
    const [download] = await Promise.all([page.waitForEvent('download'), spend.getByRole('link', { name: 'Download CSV' }).click()]);
    expect(readFileSync((await download.path())!, 'utf8')).toMatch(/^day,game,spent_usd,orders\n/);
    // By account, one click.
    await spend.getByRole('link', { name: 'by account' }).click();
    await page.locator('[data-picture="pic-spend"] .switch strong', { hasText: 'account' }).waitFor({ timeout: 15_000 });

    // Live: a second file's spend reaches the picture without a reload.
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });
    const before = Number((await page.locator('[data-total="spend"]').textContent())!.replace(' USD', ''));
    t.home.drop('second.csv', csv([['pid', 'userId'], ['PUBG-60', '5123499991'], ['PUBG-60', '5123499992']]));
    await expect.poll(async () => Number((await page.locator('[data-total="spend"]').textContent())!.replace(' USD', '')), { timeout: 90_000, interval: 500 }).toBeGreaterThan(before);
    expect(navigations, 'the Overview was not reloaded').toBe(0);
    // The spend picture stays by account through the live update.
    await page.locator('[data-picture="pic-spend"] .switch strong', { hasText: 'account' }).waitFor({ timeout: 5_000 });

    // Batches: the first batch's small bar has a failed segment; its page draws the bar with words.
    await page.goto(`${t.url}/batches`);
    const first = page.locator('tr', { hasText: 'first.csv' });
    const failedWidth = Number(await first.locator('rect[data-seg="failed"]').getAttribute('width'));
    const completedWidth = Number(await first.locator('rect[data-seg="completed"]').getAttribute('width'));
    expect(failedWidth).toBeCloseTo((4 / 17) * 100, 1);
    expect(completedWidth).toBeCloseTo((13 / 17) * 100, 1);
    await axe(page, 'the batch list with its bars');
    await first.getByRole('link').first().click();
    await page.locator('[data-f="seg-failed"]').waitFor();
    expect(await page.locator('[data-f="seg-failed"]').textContent()).toBe('4');
    expect(await page.locator('[data-f="seg-completed"]').textContent()).toBe('13');
    expect(await page.locator('svg[data-segbar]').first().getAttribute('aria-label')).toBe('completed 13, failed 4 of 17 rows');
    await axe(page, 'the batch page with its bar');
    await shot(page, '25-batch-bar', 'console-batch-bar.png', '.segwrap');

    // A phone: the pictures fold into one column and stay inside the screen.
    await page.goto(`${t.url}/`);
    await page.setViewportSize({ width: 390, height: 844 });
    const wide = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
    expect(wide).toBeLessThanOrEqual(390);
    await shot(page, '26-overview-phone');

    expect(outside).toEqual([]);
    expect(cspErrors).toEqual([]);
    await ctx.close();
  });
});
