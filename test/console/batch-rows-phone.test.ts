/**
 * Trial s36 D4: the batch page's Rows table at 390 px made every row ~600 px tall and blank: the
 * long reason (Error / note) wrapped word by word in a column squeezed narrow by the others. Now on
 * a phone the reason is one line, cut with an ellipsis, and one tap on it shows the whole text.
 * Real daemon and console, Debian's chromium through playwright-core at 390 px, axe-core on the page.
 * Skips without /usr/bin/chromium.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { csv, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, startConsoleDaemon } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

releaseAfterEach();

/** The little of the DOM read in the page (the typecheck has no DOM library). */
interface Box { height: number; right: number }
interface El { textContent: string | null; getBoundingClientRect(): Box; querySelector(s: string): El | null; querySelectorAll(s: string): ArrayLike<El> }

describe.skipIf(!existsSync(CHROMIUM))('the batch page\'s rows on a phone', () => {
  it('at 390 px a row with a long reason stays one line tall; a tap shows the whole reason; the page does not scroll sideways; axe-clean', { timeout: 150_000 }, async () => {
    const t = await startConsoleDaemon();
    const c = new Client(t.url);
    await c.get('/upload');
    const form = new FormData();
    // 99999: the sandbox's player id that always fails; the rest invalid in the file itself.
    form.set('file', new Blob([csv([['pid', 'userId', 'zoneId'], ['PUBG-60', '99999', ''], ['NO-SUCH-PACK-AT-ALL', '5123456789', ''], ['ML-86', '311000901', ''], ['PUBG-325', '5123456789', '']])]), 'phone.csv');
    const up = await c.post('/upload', form);
    expect(up.status, up.text).toBe(303);
    const check = up.headers.get('location')!;
    await c.get(check);
    expect((await c.post(`${check}/submit`, {})).status).toBe(303);
    const to = await waitFor('the batch page', async () => {
      const r = await c.get(check);
      return r.status === 303 ? r.headers.get('location')! : undefined;
    }, 30_000, 100);
    await waitFor('the batch finished', async () => {
      const r = await c.get(to);
      return r.text.includes('Result (CSV)') ? true : undefined;
    }, 60_000, 200);

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    try {
      const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await page.goto(`${t.url.replace(/\/$/, '')}${to}`);
      const table = page.locator('table.rows');
      await table.waitFor();
      const rows = await table.evaluate((el) => Array.from((el as unknown as El).querySelectorAll('tbody tr')).map((tr) => {
        const cells = tr.querySelectorAll('td');
        const reason = cells[cells.length - 2]!;
        return { height: tr.getBoundingClientRect().height, reason: (reason.textContent ?? '').trim() };
      }));
      console.log(`rows at 390 px: ${rows.map((r) => `${Math.round(r.height)} px "${r.reason.slice(0, 50)}"`).join('; ')}`);
      const long = rows.filter((r) => r.reason.length >= 40);
      expect(long.length, JSON.stringify(rows)).toBeGreaterThan(0);
      // One line of text plus the badge's and the padding's: a row was ~600 px before.
      for (const r of rows) expect(r.height, `row with reason "${r.reason}"`).toBeLessThan(90);

      // No sideways scroll of the page itself (the table scrolls inside its own region, as every table here).
      const scroll = await page.evaluate(() => {
        const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document;
        return d.documentElement.scrollWidth;
      });
      expect(scroll).toBeLessThanOrEqual(390);

      // One tap shows the whole reason, still in a readable width (not one word a line).
      const longest = rows.reduce((at, r, i) => (r.reason.length > rows[at]!.reason.length ? i : at), 0);
      const first = page.locator('table.rows tbody tr').nth(longest).locator('details.why');
      const full = ((await first.locator('summary').textContent()) ?? '').trim();
      expect(full.length).toBeGreaterThanOrEqual(40);
      await first.locator('summary').tap().catch(() => first.locator('summary').click());
      expect(await first.evaluate((el) => (el as unknown as { open: boolean }).open)).toBe(true);
      const opened = await first.evaluate((el) => {
        const s = (el as unknown as El).querySelector('summary')!;
        return { height: s.getBoundingClientRect().height, text: (s.textContent ?? '').trim() };
      });
      expect(opened.text).toBe(full);
      expect(opened.height).toBeGreaterThan(25);
      expect(opened.height).toBeLessThan(300);

      await page.evaluate(AXE);
      const violations = await page.evaluate(async () => {
        const r = await (globalThis as unknown as { axe: { run: (o: unknown) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run({
          runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
        });
        return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
      });
      expect(violations, 'accessibility of the batch page at 390 px').toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
