/**
 * The Overview's Money table of a home with two accounts in a real browser (Debian's chromium
 * through playwright-core, as browser.test.ts): at 1400 and 1920 px wide it fits its box (no
 * sideways scroll) and its rows are one or two lines, not 180 px of mostly empty cells; its runway
 * is the one of reports/runway.ts, stated once in the caption. Skips without /usr/bin/chromium.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { csv, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccountHome } from '../e2e/accounts.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

releaseAfterEach();

describe.skipIf(!existsSync(CHROMIUM))('the Money table of two accounts in a real browser', () => {
  it('fits its box at 1400 and 1920 px, rows short, one runway', { timeout: 120_000 }, async () => {
    const t = await twoAccountHome();
    const daemon = startDaemon({ ...t.env, TOPUP_CONSOLE: '127.0.0.1:0' });
    const url = await consoleUrl(daemon);
    t.home.drop('orders.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456781'], ['PUBG-325', '5123456782']]));
    await waitForResult(t.home, 'orders');
    await waitFor('both balances read', async () => {
      const text = await (await fetch(`${url}/`)).text();
      return !text.includes('not every account read yet') ? true : undefined;
    }, 15_000, 200);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    try {
      for (const width of [1400, 1920]) {
        const page = await browser.newPage({ viewport: { width, height: 900 } });
        await page.goto(`${url}/`);
        const box = page.locator('[aria-label="Money by account (table)"]');
        const size = await box.evaluate((el) => {
          const e = el as unknown as { clientWidth: number; querySelector: (s: string) => { scrollWidth: number } | null; querySelectorAll: (s: string) => ArrayLike<{ getBoundingClientRect: () => { height: number } }> };
          const rows = Array.from(e.querySelectorAll('tbody tr, tfoot tr')).map((r) => r.getBoundingClientRect().height);
          return { box: e.clientWidth, table: e.querySelector('table')!.scrollWidth, tallest: Math.max(...rows) };
        });
        expect(size.table, `table width at ${width} px`).toBeLessThanOrEqual(size.box);
        expect(size.tallest, `tallest row at ${width} px`).toBeLessThan(80);
        for (const cell of await page.locator('[data-money-account] [data-f="runway"]').allTextContents()) expect(cell).toMatch(/^(about \d|no spending in 7 days)/);
        expect(await page.locator('[data-money-how]').textContent()).toContain("last 7 days' pace");
        await page.close();
      }
    } finally {
      await browser.close();
    }
  });
});
