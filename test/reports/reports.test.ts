/**
 * The scheduled jobs, called directly against an in-process sandbox and a real store, and
 * once through node-cron with a one-second schedule and a missed schedule at start-up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { csv, inProcessSandbox, tempHome, TEST_KEY, waitFor, type TempHome } from '../e2e/harness.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { claimFile } from '../../src/claim/claim.js';
import { Runner } from '../../src/engine/runner.js';
import { Notifier } from '../../src/notify/notifier.js';
import { runBalanceReport } from '../../src/reports/balance.js';
import { runHistoryExport } from '../../src/reports/history.js';
import { runLowBalanceCheck, LOW_BALANCE_FLAG } from '../../src/reports/low-balance.js';
import { runReconcile } from '../../src/reports/reconcile.js';
import { startScheduledJobs, lastRunKey } from '../../src/reports/schedule.js';

let home: TempHome;
let sb: RunningSandbox;
let rt: Runtime;
let server: Server | undefined;
afterEach(async () => {
  await rt?.close();
  await sb?.close();
  server?.close();
  server = undefined;
  home?.remove();
});

async function setup(extra: Record<string, string> = {}, sandbox: Parameters<typeof inProcessSandbox>[0] = {}): Promise<void> {
  home = tempHome();
  sb = await inProcessSandbox(sandbox);
  const config = loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url, TOPUP_POLL_INTERVAL_MS: '200', ...extra });
  rt = openRuntime(config, silentLogger(), sb.url);
}

/** Runs a batch in this process, as the daemon would. */
async function placeBatch(rows: string[][]): Promise<string> {
  const file = join(home.dir, `b${Math.random().toString(16).slice(2)}.csv`);
  writeFileSync(file, csv([['pid', 'userId'], ...rows]));
  const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
  await new Runner(rt, { once: true, onlyBatch: batch.id }).run();
  return batch.id;
}

const readCsv = (path: string): Record<string, string>[] => parse(readFileSync(path, 'utf8'), { columns: true }) as Record<string, string>[];

describe('balance report', () => {
  it('appends one timestamped row per run to outbox/reports/balance.csv (mode 0600, header once)', async () => {
    await setup();
    await runBalanceReport(rt, Date.parse('2026-01-01T10:00:00Z'));
    sb.admin.setBalance({ balanceUsd: 42.5 });
    const { file } = await runBalanceReport(rt, Date.parse('2026-01-01T11:00:00Z'));
    expect(file).toBe(join(home.outbox, 'reports', 'balance.csv'));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const rows = readCsv(file);
    expect(rows).toEqual([
      { at: '2026-01-01T10:00:00.000Z', balanceUsd: '1000', currency: 'USD', reservedUsd: '0', mode: 'LIVE' },
      { at: '2026-01-01T11:00:00.000Z', balanceUsd: '42.5', currency: 'USD', reservedUsd: '0', mode: 'LIVE' },
    ]);
  });
});

describe('history export', () => {
  it('appends only orders new since the last export, oldest first, never twice; processing orders wait until they end', async () => {
    await setup();
    await placeBatch([['PUBG-60', '5123456789'], ['PUBG-325', '5123456789']]);
    const now = Date.parse('2026-03-15T00:30:00Z');
    const first = await runHistoryExport(rt, { now });
    expect(first.exported).toBe(2);
    expect(first.file).toBe(join(home.outbox, 'reports', 'history-2026-03.csv'));
    expect((await runHistoryExport(rt, { now })).exported).toBe(0);

    sb.admin.setFulfilment({ processingShare: 1, processingMs: [60_000, 60_000] });
    const slow = await rt.account.client.submitOrder({ pid: 'PUBG-660', trxid: 'slow-1', userId: '5123456789' });
    sb.admin.setFulfilment({ processingShare: 0 });
    await placeBatch([['PUBG-1800', '5123456789']]);
    const second = await runHistoryExport(rt, { now });
    expect(second).toMatchObject({ exported: 1, waiting: 1 });
    const rows = readCsv(second.file);
    expect(rows.map((r) => r.packName)).toEqual(['60 UC', '325 UC', '1800 UC']);
    expect(new Set(rows.map((r) => r.orderId)).size).toBe(3);
    expect(rows.map((r) => r.orderId)).not.toContain(slow.orderId);
    expect(Object.keys(rows[0]!)).not.toContain('codes');
  });

  it('an order still processing at one export is exported at a later one, even when exported orders now sit between it and the newest', async () => {
    await setup();
    const now = Date.parse('2026-03-15T00:30:00Z');
    // 20 s: the fifty orders below must be placed and exported while it still processes (6 s was
    // outlasted once on a loaded machine).
    sb.admin.setFulfilment({ processingShare: 1, processingMs: [20_000, 20_000] });
    const slow = await rt.account.client.submitOrder({ pid: 'PUBG-660', trxid: 'slow-2', userId: '5123456789' });
    sb.admin.setFulfilment({ processingShare: 0 });
    // A full history page of orders newer than the slow one, exported while it is processing.
    const fifty = Array.from({ length: 50 }, (_, i) => ['PUBG-60', String(5_100_000_000 + i)]);
    await placeBatch(fifty);
    expect(await runHistoryExport(rt, { now })).toMatchObject({ exported: 50, waiting: 1 });
    await waitFor('the slow order to complete', async () => (await rt.account.client.getOrder(slow.orderId)).status === 'completed', 45_000, 250);
    // Fifty more: page 1 is new, page 2 is all exported, and the slow order is on page 3.
    await placeBatch(fifty.map(([pid, user]) => [pid!, String(Number(user) + 100)]));
    const later = await runHistoryExport(rt, { now });
    expect(later).toMatchObject({ exported: 51, waiting: 0 });
    expect(readCsv(later.file).map((r) => r.orderId)).toContain(slow.orderId);
    expect((await runHistoryExport(rt, { now })).exported).toBe(0);
  }, 120_000);
});

describe('low-balance alert', () => {
  it('warns once below the threshold with the runway, stays quiet while low, clears when topped up — and the webhook receives it', async () => {
    const got: any[] = [];
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        got.push(JSON.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const hook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await setup({ TOPUP_LOW_BALANCE_USD: '990', TOPUP_WEBHOOK_URL: hook });
    const notifier = new Notifier(rt.config, rt.log, { retryDelaysMs: [50] });
    expect(await runLowBalanceCheck(rt, notifier)).toBe('ok');
    await placeBatch([['PUBG-8100', '5123456789']]);
    expect(await runLowBalanceCheck(rt, notifier)).toBe('alerted');
    expect(await runLowBalanceCheck(rt, notifier)).toBe('still-low');
    expect(rt.meta.get(LOW_BALANCE_FLAG)).toBeDefined();
    sb.admin.topup({ amountUsd: 500 });
    expect(await runLowBalanceCheck(rt, notifier)).toBe('cleared');
    expect(await runLowBalanceCheck(rt, notifier)).toBe('ok');
    await notifier.flush();
    expect(got.map((n) => n.event)).toEqual(['low-balance', 'low-balance-cleared']);
    expect(got[0]).toMatchObject({ data: { balanceUsd: 909, thresholdUsd: 990, usdPerDay: 13 } });
    // The one runway (reports/runway.ts): 91 USD over the last 7 days is 13 USD a day.
    expect(got[0].text).toContain("runway about 69.9 days at the last 7 days' pace (13.00 USD a day)");
  });
});

describe('reconciliation', () => {
  it('lists orders whose status or amount differ, refunds, orders not in the ledger, and the balance movement', async () => {
    await setup({}, { fulfilment: { failShare: 0 } });
    const t0 = Date.now();
    await placeBatch([['PUBG-60', '5123456789'], ['PUBG-325', '5123456789']]);
    const clean = await runReconcile(rt, { now: t0 + 1000 });
    expect(clean).toMatchObject({ checked: 2, differences: 0, refunds: 0 });

    sb.admin.setFulfilment({ failShare: 1 });
    await placeBatch([['PUBG-660', '5123456789']]);
    sb.admin.setFulfilment({ failShare: 0 });
    await rt.account.client.submitOrder({ pid: 'PUBG-60', trxid: 'elsewhere-1', userId: '5123456789' });
    rt.db.prepare(`UPDATE rows SET amount_usd = 99 WHERE pack_name = '325 UC'`).run();
    const r = await runReconcile(rt, { now: Date.now() });
    const rows = readCsv(r.file);
    const kinds = rows.map((x) => x.kind).sort();
    expect(kinds).toEqual(['amount-differs', 'balance', 'not-in-ledger', 'refund']);
    expect(rows.find((x) => x.kind === 'not-in-ledger')!.trxid).toBe('elsewhere-1');
    expect(rows.find((x) => x.kind === 'amount-differs')).toMatchObject({ localAmountUsd: '99', apiAmountUsd: '4.55' });
    // The 0.92 USD order placed elsewhere is the only movement the ledger cannot explain.
    expect(rows.find((x) => x.kind === 'balance')!.note).toMatch(/0\.92 USD less than the ledger explains/);
    expect(r.file).toMatch(/reconcile-\d{4}-\d{2}-\d{2}\.csv$/);
  });
});

/**
 * A proxy in front of the sandbox, as real deployments have one: it answers the nth GET /history
 * with its own HTML 502 page when `fails(n)`, and passes everything else through.
 */
async function proxyWithFlakyHistory(target: string, fails: (n: number) => boolean): Promise<string> {
  let n = 0;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.startsWith('/history') && fails(++n)) {
        res.writeHead(502, { 'content-type': 'text/html; charset=UTF-8' });
        res.end('<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>cloudflare</center></body></html>');
        return;
      }
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
      fetch(target + req.url, { method: req.method, headers, ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}) })
        .then(async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('reconciliation through a proxy that answers 502 (issue 21, item 8)', () => {
  async function behindProxy(fails: (n: number) => boolean): Promise<void> {
    home = tempHome();
    sb = await inProcessSandbox({ fulfilment: { failShare: 0 } });
    const url = await proxyWithFlakyHistory(sb.url, fails);
    rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: url, TOPUP_POLL_INTERVAL_MS: '200' }), silentLogger(), url);
  }

  it('one 502 from /history: the page is read again and the report is whole', async () => {
    await behindProxy((n) => n === 1);
    await placeBatch([['PUBG-60', '5123456789'], ['PUBG-325', '5123456789']]);
    const r = await runReconcile(rt, { now: Date.now(), retryDelaysMs: [50, 50, 50] });
    expect(r).toMatchObject({ checked: 2, differences: 0, unreadPages: [] });
    expect(readCsv(r.file).map((x) => x.kind)).toEqual([]);
  });

  it('a page that stays unreadable is skipped and listed; orders it may hold say so; the report is still written', async () => {
    await behindProxy(() => true);
    await placeBatch([['PUBG-60', '5123456789']]);
    const r = await runReconcile(rt, { now: Date.now(), retryDelaysMs: [20] });
    expect(r.unreadPages).toEqual([1, 2, 3]);
    const rows = readCsv(r.file);
    const unread = rows.filter((x) => x.kind === 'history-unread').map((x) => x.note);
    expect(unread).toHaveLength(4);
    expect(unread[0]).toMatch(/^page 1 of \/history could not be read after 2 tries \(.*502.*\); the orders on it were not compared$/);
    expect(unread[3]).toMatch(/stopped reading \/history after 3 pages in a row could not be read \(pages 1-3\)/);
    expect(rows.find((x) => x.kind === 'missing-in-history')!.note).toMatch(/it may be on pages 1, 2, 3 of \/history, which could not be read/);
    expect(r.differences).toBe(5);
  });
});

describe('schedule', () => {
  it('runs a job on a one-second cron, runs a missed schedule once at start-up, and stops', async () => {
    await setup({ TOPUP_BALANCE_REPORT_CRON: '* * * * * *', TOPUP_HISTORY_EXPORT_CRON: '0 0 1 1 *', TOPUP_RECONCILE_CRON: 'off' });
    const notifier = new Notifier(rt.config, rt.log);
    rt.meta.setJson('reports.history-export.schedule', { pattern: '0 0 1 1 *', nextDue: Date.now() - 3_600_000 });
    const jobs = startScheduledJobs(rt, notifier);
    expect(jobs.names).toEqual(['balance-report', 'history-export']);
    const balance = join(home.outbox, 'reports', 'balance.csv');
    await waitFor('two balance rows', () => existsSync(balance) && readCsv(balance).length >= 2, 5_000, 100);
    await waitFor('missed history export', () => rt.meta.getJson<{ ok: boolean }>(lastRunKey('history-export'))?.ok === true, 5_000);
    const next = rt.meta.getJson<{ nextDue: number }>('reports.history-export.schedule')!.nextDue;
    expect(next).toBeGreaterThan(Date.now());
    await jobs.stop();
    const n = readCsv(balance).length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(readCsv(balance).length).toBe(n);
  });
});
