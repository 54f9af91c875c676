/**
 * The Overview's Money section of a home with two accounts, in a real browser (Debian's chromium
 * through playwright-core, as money-browser.test.ts). Trial s34:
 *  - at 390 px wide the Money table's caption was cut at the right edge (its text laid out across
 *    the table's full width inside a box that scrolls sideways): now every line of it ends inside
 *    the viewport;
 *  - the live feed updated Reserved but not Available (nor the balance it comes from): a top-up
 *    and a purchase left the open page showing the old figure until a reload. Now Available and
 *    the balance follow the feed, and agree with a fresh render of the page.
 * Skips without /usr/bin/chromium.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { csv, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccountHome } from '../e2e/accounts.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

releaseAfterEach();

/** main's Available as the server renders the Overview now. */
async function renderedAvailable(url: string): Promise<string> {
  const text = await (await fetch(`${url}/`)).text();
  const row = /<tr data-money-account="main">(.*?)<\/tr>/s.exec(text)?.[1] ?? '';
  return /data-f="available">([^<]*)</.exec(row)?.[1] ?? '';
}

describe.skipIf(!existsSync(CHROMIUM))('the Money section on a phone and live', () => {
  it('at 390 px the caption ends inside the viewport; Available and the balance follow a top-up and a purchase without a reload', { timeout: 150_000 }, async () => {
    const t = await twoAccountHome();
    const daemon = startDaemon({ ...t.env, TOPUP_CONSOLE: '127.0.0.1:0' });
    const url = (await consoleUrl(daemon)).replace(/\/$/, '');
    await waitFor('both balances read', async () => {
      const text = await (await fetch(`${url}/`)).text();
      return !text.includes('not every account read yet') ? true : undefined;
    }, 15_000, 200);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    try {
      const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await phone.goto(`${url}/`);
      const section = phone.locator('section[aria-labelledby="money"]');
      await section.screenshot({ path: join(mkdtempSync(join(tmpdir(), 'money-phone-')), 'money-390.png') });
      const caption = await phone.locator('[aria-label="Money by account (table)"] caption').evaluate((el) => {
        const doc = (el as unknown as { ownerDocument: { createRange: () => { selectNodeContents: (n: unknown) => void; getClientRects: () => ArrayLike<{ right: number }> } } }).ownerDocument;
        const range = doc.createRange();
        range.selectNodeContents(el);
        const rights = Array.from(range.getClientRects()).map((r) => r.right);
        return { right: Math.max(...rights), text: (el as unknown as { textContent: string | null }).textContent ?? '' };
      });
      expect(caption.text.length).toBeGreaterThan(0);
      expect(caption.right, `caption "${caption.text}" at 390 px`).toBeLessThanOrEqual(390);
      // What the caption used to say is still on the page, and inside the viewport too.
      const how = await section.evaluate((el) => {
        const p = el.querySelector('[data-money-how]');
        return p ? { right: p.getBoundingClientRect().right, text: p.textContent ?? '' } : null;
      });
      expect(how?.text).toContain("last 7 days' pace");
      expect(how!.right).toBeLessThanOrEqual(390);
      await phone.close();

      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${url}/`);
      const live = page.locator('tr[data-money-account="main"] [data-f="available"]');
      const before = (await live.textContent())!.trim();
      expect(before).toBe(await renderedAvailable(url));
      t.main.admin.topup({ amountUsd: 100 });
      t.home.drop('one.csv', csv([['pid', 'userId', 'account'], ['PUBG-60', '5123456781', 'main']]));
      await waitForResult(t.home, 'one');
      const fresh = await waitFor('a fresh render shows the new balance', async () => {
        const a = await renderedAvailable(url);
        return a !== before ? a : undefined;
      }, 30_000, 250);
      // The open page, never reloaded, follows.
      await expect.poll(async () => (await live.textContent())!.trim(), { timeout: 15_000 }).toBe(fresh);
      // And the balance beside it moved with it: available = balance - reserved, all three live.
      const figure = async (f: string): Promise<number> => Number((await page.locator(`tr[data-money-account="main"] [data-f="${f}"]`).textContent())!.replace(/[^0-9.]/g, ''));
      expect(fresh).toBe(`${((await figure('balance-usd')) - (await figure('reserved'))).toFixed(2)} USD`);
      await page.close();
    } finally {
      await browser.close();
      await daemon.stop();
    }
  });
});
