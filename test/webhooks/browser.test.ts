/**
 * The console's Webhooks page in a real browser (Debian's chromium, playwright-core) against a
 * real daemon: reached from the menu, accessible (axe-core), a failed event shown with its last
 * error, and its Replay button posting it again through the daemon's deliverer (the form's CSRF
 * token as the page gives it). Skips with one line without /usr/bin/chromium.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { openDb } from '../../src/store/db.js';
import { SECRET, apiBatch, apiOrder, eventsOf, move, receiver, type Receiver } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const available = existsSync(CHROMIUM);
if (!available) console.log(`browser tests skipped: ${CHROMIUM} is not installed`);

releaseAfterEach();
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

let browser: Browser;

describe.skipIf(!available)('the Webhooks page in a real browser', () => {
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows a failed webhook with its last error; Replay posts it again', { timeout: 90_000 }, async () => {
    const r = await receiver();
    receivers.push(r);
    const home = tempHome('topup-hooks-browser-');
    // Orders that have ended (their batch done), one event given up, as after 26 h of a receiver answering 500.
    const db = openDb(join(home.jobs, 'topup.db'));
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'PAGE-1');
    move(db, b, 0, 'rejected');
    db.prepare("UPDATE batches SET state = 'done', finished_at = 1 WHERE id = ?").run(b);
    db.prepare("UPDATE order_events SET delivery = 'delivered' WHERE id = 1").run();
    db.prepare("UPDATE order_events SET delivery = 'failed', attempts = 20, last_status = 500, last_error = 'HTTP 500' WHERE id = 2").run();

    const daemon = startDaemon(cliEnv(home, null, { TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_ORDER_WEBHOOK_URL: r.url, TOPUP_ORDER_WEBHOOK_SECRET: SECRET }));
    const url = `${await consoleUrl(daemon)}/`;
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    try {
      await page.goto(url);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.waitForURL(/\/webhooks$/);
      expect(await page.locator('[data-count="failed"]').textContent()).toBe('1');
      const row = page.locator('tr[data-event="evt_2"]');
      expect(await row.textContent()).toContain('HTTP 500');
      expect(await row.textContent()).toContain('order.rejected');
      await page.evaluate(AXE);
      const violations = await page.evaluate(async () => {
        const res = await (globalThis as unknown as { axe: { run: (o: unknown) => Promise<{ violations: { id: string }[] }> } }).axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
        return res.violations.map((v) => v.id);
      });
      expect(violations).toEqual([]);

      await row.getByRole('button', { name: 'Replay' }).click();
      await page.waitForURL(/replayed=/);
      expect(await page.getByRole('status').first().textContent()).toContain('Replayed 1 event');
      await waitFor('the replayed event posted', () => r.received.some((x) => x.event.id === 'evt_2'), 10_000, 50);
      await waitFor('recorded as delivered', () => eventsOf(db)[1]!.delivery === 'delivered', 5_000, 20);
      await page.reload();
      expect(await page.locator('[data-count="failed"]').textContent()).toBe('0');
      expect(pageErrors).toEqual([]);
    } finally {
      await ctx.close();
      db.close();
    }
  });
});
