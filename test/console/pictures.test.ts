/**
 * Issue 33: the Overview's pictures, against a real daemon and sandbox. Every picture's numbers
 * (its CSV, the same figures its table and drawing show) are held to the rows of the store itself,
 * spend to the cent; the Overview shows one balance, not two.
 */
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, runCli, startDaemon, tempHome, waitFor, waitForResult, readResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, startConsoleDaemon } from './helpers.js';
import { SPENT_USD_SQL } from '../../src/store/cost.js';

releaseAfterEach();

function parseCsv(text: string): Record<string, string>[] {
  return parse(text, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
}

const DAY_MS = 86_400_000;
const cents = (usd: string | number): number => Math.round(Number(usd) * 100);

describe('the Overview\'s pictures (issue 33)', () => {
  it('shows one balance: after a top-up in another process, the badge and Money say the same', { timeout: 90_000 }, async () => {
    const home = tempHome('topup-pictures-');
    const env = cliEnv(home, null, { TOPUP_CONSOLE: '127.0.0.1:0' });
    const daemon = startDaemon(env);
    const url = (await waitFor('the console address', () => /console: open (http:\/\/[^\s]+\/) in a browser/.exec(daemon.output())?.[1], 30_000)).replace(/\/$/, '');
    await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 30_000, 20);
    const c = new Client(url);
    const balances = async (): Promise<{ badge: string | undefined; money: string | undefined }> => {
      const t = (await c.get('/')).text;
      return {
        badge: /data-sandbox-balance>([^<]+)</.exec(t)?.[1],
        money: /<dt>Balance \(sandbox\)<\/dt><dd>(?:<strong[^>]*>)?([^<]+?)(?:<\/strong>| read)/.exec(t)?.[1],
      };
    };
    await waitFor('the first balance read', async () => (await balances()).money?.endsWith('USD'), 30_000, 200);
    expect(await balances()).toEqual({ badge: '1000.00 USD', money: '1000.00 USD' });
    const add = await runCli(['sandbox', 'balance', '--add', '500'], env);
    expect(add.code, add.stderr).toBe(0);
    expect(await balances()).toEqual({ badge: '1500.00 USD', money: '1500.00 USD' });
    expect(await daemon.stop()).toBe(0);
  });

  it('each picture\'s totals equal the store\'s (spend to the cent), by game and by account; margin from the file\'s sale-price column', { timeout: 120_000 }, async () => {
    const t = await startConsoleDaemon({}, { fulfilment: { processingShare: 1, processingMs: [100, 400] } });
    // Two games; three rows the sandbox fails and refunds (player 99999); a sale price on some rows.
    const rows: (string | number)[][] = [['pid', 'userId', 'zoneId', 'Sale Price', 'customer']];
    for (let i = 0; i < 6; i++) rows.push(['PUBG-60', String(5_123_400_000 + i), '', i % 2 === 0 ? `${(1.5 + i).toFixed(2)}` : '', `c${i}`]);
    for (let i = 0; i < 4; i++) rows.push(['ML-172', String(123_456_700 + i), '2001', '4.10', `m${i}`]);
    for (let i = 0; i < 3; i++) rows.push(['PUBG-60', '99999', '', '2.00', `f${i}`]);
    t.home.drop('pics.csv', csv(rows));
    await waitForResult(t.home, 'pics');
    const result = readResult(t.home, 'pics');
    expect(result.filter((r) => r.status === 'completed')).toHaveLength(10);

    const db = new Database(join(t.home.jobs, 'topup.db'), { readonly: true });
    const c = new Client(t.url);
    const get = async (path: string): Promise<Record<string, string>[]> => {
      const r = await c.get(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
      return parseCsv(r.text);
    };

    // Spend: per day and game, and per day and account, to the cent.
    const storeSpend = db.prepare(`SELECT strftime('%Y-%m-%d', updated_at / 1000, 'unixepoch') AS day, slug, account, sum(round((${SPENT_USD_SQL}) * 100)) AS c, count(*) AS n
      FROM rows WHERE (${SPENT_USD_SQL}) > 0 GROUP BY 1, 2, 3`).all() as { day: string; slug: string; account: string; c: number; n: number }[];
    const totalStore = storeSpend.reduce((s, r) => s + r.c, 0);
    expect(totalStore).toBeGreaterThan(0);
    const byGame = await get('/pictures/spend.csv?by=game');
    expect(byGame.reduce((s, r) => s + cents(r.spent_usd!), 0)).toBe(totalStore);
    for (const r of storeSpend) {
      const line = byGame.find((g) => g.day === r.day && g.game === r.slug);
      expect(line, `${r.day} ${r.slug}`).toBeDefined();
      expect(cents(line!.spent_usd!)).toBe(r.c);
      expect(Number(line!.orders)).toBe(r.n);
    }
    const byAccount = await get('/pictures/spend.csv?by=account');
    expect(byAccount.reduce((s, r) => s + cents(r.spent_usd!), 0)).toBe(totalStore);
    expect(byAccount.map((r) => r.account)).toEqual(byAccount.map(() => 'default'));
    // The Overview says the same total, and draws it.
    const overview = (await c.get('/')).text;
    expect(overview).toContain(`<strong data-total="spend">${(totalStore / 100).toFixed(2)} USD</strong>`);
    // This week: the last 7 UTC days, today included, in all and by game.
    const weekFrom = new Date(Date.now() - 6 * DAY_MS).toISOString().slice(0, 10);
    const week = storeSpend.filter((r) => r.day >= weekFrom);
    expect(week.length).toBeGreaterThan(0);
    expect(overview).toContain(`<strong data-total="spend-week">${(week.reduce((n, r) => n + r.c, 0) / 100).toFixed(2)} USD</strong>`);
    for (const slug of new Set(week.map((r) => r.slug))) expect(overview).toContain(`${slug} ${(week.filter((r) => r.slug === slug).reduce((n, r) => n + r.c, 0) / 100).toFixed(2)} USD`);
    for (const id of ['pic-spend', 'pic-outcomes', 'pic-failures', 'pic-balance', 'pic-rate', 'pic-latency-0', 'pic-margin']) expect(overview, id).toContain(`data-chart="${id}"`);

    // Outcomes per day.
    const storeOut = db.prepare(`SELECT strftime('%Y-%m-%d', updated_at / 1000, 'unixepoch') AS day,
        sum(state = 'completed') AS completed, sum(state = 'cancelled') AS cancelled, sum(state = 'rejected') AS rejected, sum(state = 'review') AS review
      FROM rows GROUP BY 1`).all() as { day: string; completed: number; cancelled: number; rejected: number; review: number }[];
    const outcomes = await get('/pictures/outcomes.csv');
    for (const s of storeOut) {
      const o = outcomes.find((r) => r.day === s.day)!;
      expect([Number(o.completed), Number(o.cancelled_or_refunded), Number(o.rejected), Number(o.in_review)]).toEqual([s.completed, s.cancelled, s.rejected, s.review]);
    }
    expect(outcomes.reduce((s, r) => s + Number(r.completed), 0)).toBe(10);
    expect(outcomes.reduce((s, r) => s + Number(r.cancelled_or_refunded), 0)).toBe(3);

    // Failures: rates per day, and the answer classes summing to the failures.
    const failures = await get('/pictures/failures.csv');
    expect(failures.reduce((s, r) => s + Number(r.failed), 0)).toBe(3);
    expect(failures.reduce((s, r) => s + Number(r.refunded), 0)).toBe(3);
    const classes = await get('/pictures/failure-classes.csv');
    expect(classes.reduce((s, r) => s + Number(r.failed_orders_30_days), 0)).toBe(3);
    // By the supplier's own code (its error on the cancelled order), with what became of the money.
    expect(classes.map((r) => [r.answer_class, r.failed_orders_30_days])).toEqual([['INVALID PLAYER (cancelled by the supplier, refunded)', '3']]);
    expect(overview).toContain('INVALID PLAYER (cancelled by the supplier, refunded)');

    // Time to completion: one count per completed row, on its day and game.
    const latency = await get('/pictures/latency.csv');
    const storeDone = db.prepare(`SELECT strftime('%Y-%m-%d', updated_at / 1000, 'unixepoch') AS day, slug, count(*) AS n,
        max(updated_at - first_sent_at) AS worst FROM rows WHERE state = 'completed' GROUP BY 1, 2`).all() as { day: string; slug: string; n: number; worst: number }[];
    for (const s of storeDone) {
      const l = latency.find((r) => r.day === s.day && r.game === s.slug)!;
      expect(Number(l.completed)).toBe(s.n);
      // p95 is within the roll-up's step (about 13 %) of the slowest of so few rows.
      expect(Number(l.p95_seconds) * 1000).toBeGreaterThan(s.worst * 0.85 - 100);
      expect(Number(l.p95_seconds) * 1000).toBeLessThan(s.worst * 1.15 + 100);
    }

    // Margin: revenue and cost of completed rows with a sale price (the column report names it).
    const storeMargin = db.prepare(`SELECT slug, count(*) AS n, sum(round(sale_usd * 100)) AS rev, sum(round((${SPENT_USD_SQL}) * 100)) AS cost
      FROM rows WHERE state = 'completed' AND sale_usd IS NOT NULL GROUP BY slug`).all() as { slug: string; n: number; rev: number; cost: number }[];
    expect(storeMargin.reduce((s, r) => s + r.n, 0)).toBe(7);
    const margin = await get('/pictures/margin-games.csv');
    for (const s of storeMargin) {
      const m = margin.find((r) => r.game === s.slug)!;
      expect([Number(m.orders_with_sale_price), cents(m.revenue_usd!), cents(m.cost_usd!), cents(m.margin_usd!)]).toEqual([s.n, s.rev, s.cost, s.rev - s.cost]);
    }
    const perDay = await get('/pictures/margin.csv');
    expect(perDay.reduce((s, r) => s + cents(r.revenue_usd!), 0)).toBe(storeMargin.reduce((s, r) => s + r.rev, 0));

    // Rate: the calls the store recorded this hour, and every order call among them.
    const rate = await get('/pictures/rate.csv');
    const orderCalls = rate.reduce((s, r) => s + Number(r.orders), 0);
    expect(orderCalls).toBe(13);
    expect(rate.reduce((s, r) => s + Number(r.calls), 0)).toBeGreaterThanOrEqual(13);

    // Balance: the readings the store kept, the last one the sandbox's balance now.
    const balance = await get('/pictures/balance.csv');
    const today = balance.filter((r) => r.day === new Date().toISOString().slice(0, 10));
    const last = db.prepare('SELECT usd FROM balance_readings ORDER BY at DESC LIMIT 1').get() as { usd: number };
    expect(Number(today[0]!.balance_usd)).toBeCloseTo(last.usd, 2);
    db.close();
  });
});
