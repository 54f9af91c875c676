/**
 * Issue 13, "Tests in a real browser": Debian's chromium driven by playwright-core (never a
 * downloaded browser), against a real daemon. A new user's way (npm start: the built-in sandbox)
 * and an operator's (cancel, review, reports), every page checked with axe-core, every request
 * the pages make checked to stay on 127.0.0.1, screenshots kept in test/artifacts/console/.
 *
 * Without /usr/bin/chromium (.ci/run installs it where it can) these tests skip with one line.
 * TOPUP_DOCS_SCREENSHOT=1 also writes docs/console-overview.png for the README.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, TEST_KEY, cliEnv, csv, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { EXAMPLE_MIXED, startConsoleDaemon } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const ARTIFACTS = join(ROOT, 'test', 'artifacts', 'console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const available = existsSync(CHROMIUM);
if (!available) console.log(`browser tests skipped: ${CHROMIUM} is not installed (apt-get install chromium; .ci/run does it where it can)`);

releaseAfterEach();

let browser: Browser;

/** The little of the DOM the tests read in the page (the typecheck has no DOM library). */
interface El { textContent: string | null }
interface Doc {
  querySelector(sel: string): El | null;
  querySelectorAll(sel: string): ArrayLike<El> & Iterable<El>;
  createRange(): { selectNodeContents(n: El): void; getClientRects(): Iterable<{ top: number }> };
}

/** A browser context that records every request and lets none leave 127.0.0.1. */
async function context(): Promise<{ ctx: BrowserContext; page: Page; outside: string[]; cspErrors: string[] }> {
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
  return { ctx, page, outside, cspErrors };
}

/** axe-core on the page as it is; run through the DevTools protocol, so the page's CSP stays on. */
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

// Waiting assertions on what the page shows (playwright-core has no expect of its own).
const text = async (loc: Locator): Promise<string> => ((await loc.first().textContent({ timeout: 15_000 })) ?? '').trim();
async function hasText(loc: Locator, want: string, timeout = 15_000): Promise<void> {
  await expect.poll(() => text(loc), { timeout, interval: 100 }).toBe(want);
}
async function containsText(loc: Locator, want: string, timeout = 15_000): Promise<void> {
  await expect.poll(() => text(loc), { timeout, interval: 100 }).toContain(want);
}
async function visible(loc: Locator, timeout = 15_000): Promise<void> {
  await loc.first().waitFor({ state: 'visible', timeout });
}

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

describe.skipIf(!available)('the console in a real browser', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('a new user (npm start, built-in sandbox): uploads examples/mixed.csv, sees the quote, submits, watches it finish, opens it, downloads the result, reveals one row', { timeout: 120_000 }, async () => {
    const home = tempHome('topup-browser-');
    // As `npm start` runs it: no API URL (the built-in sandbox), the scheduled jobs at their defaults.
    const env = cliEnv(home, null, { TOPUP_CONSOLE: '127.0.0.1:0' });
    for (const k of ['TOPUP_BALANCE_REPORT_CRON', 'TOPUP_HISTORY_EXPORT_CRON', 'TOPUP_RECONCILE_CRON', 'TOPUP_LOW_BALANCE_CRON']) delete env[k];
    const daemon = startDaemon(env);
    const url = `${await consoleUrl(daemon)}/`;
    const { ctx, page, outside, cspErrors } = await context();

    await page.goto(url);
    await hasText(page.locator('.mode'), 'SANDBOX: no real money · 1000.00 USD');
    await axe(page, 'the overview');
    await shot(page, '01-overview-empty');

    await page.getByRole('link', { name: 'Upload', exact: true }).click();
    await axe(page, 'the upload page');
    await page.setInputFiles('#file', EXAMPLE_MIXED.pathname);
    await containsText(page.locator('[data-file-note]'), 'Chosen: mixed.csv');
    await page.getByRole('button', { name: 'Check file' }).click();
    await visible(page.getByRole('heading', { name: 'Quote for mixed.csv' }));
    await hasText(page.locator('[data-quote-total]'), '76.11 USD');
    await hasText(page.locator('[data-quote-after]'), '923.89 USD');
    await axe(page, 'the quote');
    await shot(page, '02-quote');

    await page.getByRole('button', { name: /^Submit 9 rows for 76\.11 USD$/ }).click();
    await page.waitForURL(/\/batches\/b/, { timeout: 30_000 });
    const batchUrl = page.url();
    const batchId = decodeURIComponent(batchUrl.split('/batches/')[1]!);

    // The list follows the batch to its end without being reloaded.
    await page.goto(`${url}batches`);
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });
    const row = page.locator(`tr[data-batch="${batchId}"]`);
    await hasText(row.locator('[data-f="done"]'), '9 / 9', 60_000);
    await hasText(row.locator('[data-f="state"]'), 'done');
    expect(navigations).toBe(0);
    await axe(page, 'the batch list');
    await shot(page, '03-batches');

    await row.getByRole('link', { name: batchId }).click();
    await visible(page.getByRole('link', { name: 'Result (CSV)' }));
    await axe(page, 'the batch page');
    await shot(page, '04-batch');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Result (CSV)' }).click()]);
    expect(download.suggestedFilename()).toBe('mixed.result.csv');
    expect(readFileSync((await download.path())!, 'utf8')).toBe(readFileSync(join(home.outbox, 'mixed.result.csv'), 'utf8'));

    // Codes: hidden until one row is revealed.
    await visible(page.locator('td', { hasText: '2 hidden' }));
    await page.locator('tr', { hasText: 'KEY-PUBG-325' }).getByRole('button', { name: 'Reveal' }).click();
    await expect.poll(() => page.locator('ul.codes li').count(), { timeout: 15_000 }).toBe(2);
    await axe(page, 'the revealed codes');

    await page.goto(url);
    await containsText(page.locator('.grid'), 'Balance (sandbox)');
    await shot(page, '05-overview');
    if (process.env.TOPUP_DOCS_SCREENSHOT === '1') await page.screenshot({ path: join(ROOT, 'docs', 'console-overview.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, '06-overview-phone');
    await page.goto(`${url}audit`);
    await containsText(page.locator('table'), 'reveal');
    await axe(page, 'the audit log');

    expect(outside).toEqual([]);
    expect(cspErrors).toEqual([]);
    await ctx.close();
    expect(await daemon.stop()).toBe(0);
  });

  it('right after Submit the batch page follows the batch: the status table and the row list move with the figures, in place; ids stay on one line (issue 21, item 7)', { timeout: 120_000 }, async () => {
    // 4 orders a second: 40 rows take about ten seconds, long enough to look at the page mid-way.
    const t = await startConsoleDaemon({ TOPUP_RATE_LIMITS: '4/1s' });
    const url = `${t.url}/`;
    const { ctx, page, outside, cspErrors } = await context();
    await page.setViewportSize({ width: 1024, height: 800 });
    const rows = Array.from({ length: 40 }, (_, i) => ['PUBG-60', String(5_123_400_000 + i), `customer ${i} with a long name`]);
    const file = join(t.home.dir, 'forty.csv');
    writeFileSync(file, csv([['pid', 'userId', 'Customer'], ...rows]));
    await page.goto(`${url}upload`);
    await page.setInputFiles('#file', file);
    await page.getByRole('button', { name: 'Check file' }).click();
    await page.getByRole('button', { name: /^Submit 40 rows/ }).click();
    await page.waitForURL(/\/batches\/b/, { timeout: 30_000 });
    let navigations = 0;
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) navigations++;
    });

    // Mid-way (the live figures say some rows are done, not all), read everything the page shows.
    const seen = await expect.poll(async () => page.evaluate(() => {
      const document = (globalThis as unknown as { document: Doc }).document;
      const txt = (sel: string): string => document.querySelector(sel)?.textContent?.trim() ?? '';
      const done = /^(\d+) \/ 40$/.exec(txt('[data-f="done"]'));
      const status = ['pending', 'inFlight', 'followed', 'completed', 'cancelled', 'rejected', 'invalid', 'skipped', 'review'].map((k) => Number(txt(`[data-f="c-${k}"]`) || NaN));
      return {
        done: done ? Number(done[1]) : -1,
        completed: Number(txt('[data-f="completed"]')),
        status,
        match: txt('[data-rows-body] p'),
        completedRows: document.querySelectorAll('table.rows .badge.s-completed').length,
        listedRows: document.querySelectorAll('table.rows tbody tr').length,
      };
    }), { timeout: 60_000, interval: 200 }).toSatisfy((v: { done: number; completed: number; status: number[]; completedRows: number; listedRows: number }) =>
      v.done >= 8 && v.done <= 32 && v.status[3] === v.completed && v.completedRows >= v.completed - 8 && v.completedRows > 0);
    void seen;
    const mid = await page.evaluate(() => {
      const document = (globalThis as unknown as { document: Doc }).document;
      return {
      status: [...document.querySelectorAll('table.states td')].map((td) => Number(td.textContent)),
      match: document.querySelector('[data-rows-body] p')?.textContent?.trim(),
      listed: document.querySelectorAll('table.rows tbody tr').length,
      };
    });
    expect(mid.status.reduce((a, b) => a + b, 0)).toBe(40);
    expect(mid.match).toBe('40 rows match.');
    expect(mid.listed).toBe(40);
    expect(navigations, 'the page was not reloaded to show this').toBe(0);
    await axe(page, 'the batch page while it runs');
    await shot(page, '10-batch-running');

    // No id in a row table is broken across lines.
    const broken = await page.evaluate(() => {
      const document = (globalThis as unknown as { document: Doc }).document;
      return [...document.querySelectorAll('table.rows td.id')].filter((td) => {
      if (!td.textContent?.trim()) return false;
      const r = document.createRange();
      r.selectNodeContents(td);
      return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1;
    }).map((td) => td.textContent);
    });
    expect(broken).toEqual([]);

    // At the end the page shows the finished batch, every row completed.
    await hasText(page.locator('[data-f="c-completed"]'), '40', 60_000);
    await expect.poll(() => page.locator('table.rows .badge.s-completed').count(), { timeout: 30_000 }).toBe(40);
    expect(outside).toEqual([]);
    expect(cspErrors).toEqual([]);
    await ctx.close();
  });

  it('review: a card names the order its last answer named; many rows are resolved at once, each checked and recorded (issue 21, item 7)', { timeout: 120_000 }, async () => {
    const t = await startConsoleDaemon({ TOPUP_REVIEW_AFTER_MS: '2000', TOPUP_REQUEST_TIMEOUT_MS: '1000' });
    const url = `${t.url}/`;
    const { ctx, page, outside, cspErrors } = await context();
    await page.goto(`${url}login`);
    await page.getByLabel(/Your name/).fill('ana');
    await page.getByRole('button', { name: 'Save' }).click();

    // Yesterday's order for trxid SHOP-1001 (another player): a file reusing that trxid is answered
    // with it, which is not this row's purchase: review, the answer naming that order.
    const old = await fetch(`${t.sb.url}/orders`, { method: 'POST', headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ pid: 'PUBG-60', trxid: 'SHOP-1001', userId: '5123450000' }) });
    const oldOrder = ((await old.json()) as { orderId: string }).orderId;
    expect(oldOrder).toMatch(/^ORD\d+$/);
    t.home.drop('reused.csv', csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456789', 'SHOP-1001']]));
    await page.goto(`${url}review`);
    await hasText(page.locator('[data-review-count]'), '1', 60_000);
    // Three rows whose every send is answered 500: review, no order named.
    t.sb.admin.setFaults({ error5xxBeforeShare: 1 });
    t.home.drop('stuck.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456701'], ['PUBG-60', '5123456702'], ['PUBG-60', '5123456703']]));
    await hasText(page.locator('[data-review-count]'), '4', 60_000);
    t.sb.admin.setFaults({ error5xxBeforeShare: 0 });
    await page.reload();

    const reused = page.locator('.review-row', { hasText: 'SHOP-1001' });
    expect(await reused.getByLabel('Charged: its order id').inputValue()).toBe(oldOrder);
    await containsText(reused.locator('dl.facts'), `${oldOrder} (by the last answer: check it is this row's purchase)`);
    for (const stuck of await page.locator('.review-row', { hasNotText: 'SHOP-1001' }).all()) {
      expect(await stuck.getByLabel('Charged: its order id').inputValue()).toBe('');
    }
    await axe(page, 'the review queue with the form for many rows');

    // All four as charged: each is checked as on its own card, so none is resolved.
    await page.getByLabel('Select every row shown').check();
    await hasText(page.locator('[data-picked]'), '4 selected');
    await page.getByLabel(/Charged: each with the order id its card names/).check();
    await page.getByRole('button', { name: 'Resolve the selected rows' }).click();
    await containsText(page.getByRole('alert'), 'Resolved 0 of 4 selected rows as charged; 4 not resolved');
    await containsText(page.getByRole('alert'), `order ${oldOrder} is another purchase`);
    await containsText(page.getByRole('alert'), 'no order id is named for it');
    await hasText(page.locator('[data-review-count]'), '4');

    // The three stuck rows as NOT charged, at once.
    for (const stuck of await page.locator('.review-row', { hasNotText: 'SHOP-1001' }).all()) await stuck.getByLabel('Select for resolving at once').check();
    await hasText(page.locator('[data-picked]'), '3 selected');
    await page.getByLabel(/NOT charged: nothing was bought/).check();
    await page.getByRole('button', { name: 'Resolve the selected rows' }).click();
    await containsText(page.getByRole('status'), 'Resolved 3 of 3 selected rows as not-charged.');
    await hasText(page.locator('[data-review-count]'), '1');
    await shot(page, '11-review-many');

    await page.goto(`${url}audit`);
    const entries = await page.locator('tbody tr', { hasText: 'resolve' }).evaluateAll((trs) =>
      trs.map((tr) => [...(tr as unknown as { cells: Iterable<{ textContent: string }> }).cells].map((td) => td.textContent.trim())));
    // When, who, action, outcome, batch:line, detail: one entry per row and decision.
    expect(entries.filter((e) => e[2] === 'resolve' && e[3] === 'ok' && e[5] === 'not-charged: now rejected')).toHaveLength(3);
    expect(entries.filter((e) => e[2] === 'resolve' && (e[3] === 'failed' || e[3] === 'refused') && e[5]!.startsWith('charged'))).toHaveLength(4);
    expect(entries.every((e) => e[1]!.startsWith('ana (console)'))).toBe(true);
    expect(outside).toEqual([]);
    expect(cspErrors).toEqual([]);
    await ctx.close();
  });

  it('an operator: cancels a batch waiting for balance, resolves a review row, runs a report; nothing leaves 127.0.0.1', { timeout: 120_000 }, async () => {
    const t = await startConsoleDaemon(
      { TOPUP_REVIEW_AFTER_MS: '2000', TOPUP_REQUEST_TIMEOUT_MS: '1000' },
      { balanceUsd: 5, fulfilment: { processingShare: 1, processingMs: [500, 1500] } },
    );
    const url = `${t.url}/`;
    const { ctx, page, outside, cspErrors } = await context();

    await page.goto(`${url}login`);
    await axe(page, 'the name page');
    await page.getByLabel(/Your name/).fill('ana');
    await page.getByRole('button', { name: 'Save' }).click();

    // A file the balance does not cover: it waits; cancel it.
    await page.goto(`${url}upload`);
    await page.setInputFiles('#file', EXAMPLE_MIXED.pathname);
    await page.getByRole('button', { name: 'Check file' }).click();
    await containsText(page.getByRole('alert'), 'Not affordable: top up at least 71.11 USD');
    await page.getByRole('button', { name: /^Submit 9 rows/ }).click();
    await page.waitForURL(/\/batches\/b/);
    await containsText(page.locator('dd[data-f="why"]'), 'waiting for balance', 30_000);
    await page.getByRole('link', { name: 'Cancel…' }).click();
    await containsText(page.locator('ul.consequences'), '9 rows not sent yet (76.11 USD) will be skipped');
    await containsText(page.locator('ul.consequences'), '0 rows already sent (up to 0.00 USD) may still be charged');
    await axe(page, 'the cancel confirmation');
    await shot(page, '07-cancel');
    await page.getByRole('button', { name: /^Cancel the batch/ }).click();
    await visible(page.getByRole('link', { name: 'Result (CSV)' }), 30_000);
    await hasText(page.locator('[data-f="c-skipped"]'), '9');
    expect(t.sb.admin.ledger().orders).toHaveLength(0);

    // A row whose every send is answered 500 ends in review; resolve it as not charged.
    t.sb.admin.setBalance({ balanceUsd: 100 });
    t.sb.admin.setFaults({ error5xxBeforeShare: 1 });
    t.home.drop('stuck.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    await page.goto(`${url}review`);
    await hasText(page.locator('[data-review-count]'), '1', 60_000);
    t.sb.admin.setFaults({ error5xxBeforeShare: 0 });
    await page.reload();
    await containsText(page.locator('.review-row'), 'REVIEW: no attempt got a definite answer');
    await axe(page, 'the review queue');
    await shot(page, '08-review');
    await page.getByRole('button', { name: 'Resolve as NOT charged' }).click();
    await containsText(page.getByRole('status'), 'as not-charged (now rejected)');
    await containsText(page.locator('main'), 'No rows waiting for review.');

    // Reports: run the balance report now, then download it.
    await page.getByRole('link', { name: 'Reports' }).click();
    await page.locator('tr', { hasText: 'balance-report' }).getByRole('button', { name: 'Run now' }).click();
    await containsText(page.getByRole('status'), 'balance-report queued');
    await waitFor('balance.csv', () => existsSync(join(t.home.outbox, 'reports', 'balance.csv')), 30_000, 100);
    await page.reload();
    await axe(page, 'the reports page');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'balance.csv' }).click()]);
    expect(readFileSync((await download.path())!, 'utf8')).toMatch(/^at,balanceUsd,/);

    await page.goto(`${url}batches?state=done`);
    await axe(page, 'the filtered batch list');
    await page.goto(`${url}audit`);
    for (const action of ['cancel', 'resolve', 'run-job', 'download']) await containsText(page.locator('table'), action);
    await shot(page, '09-audit');

    expect(outside).toEqual([]);
    expect(cspErrors).toEqual([]);
    await ctx.close();
  });
});
