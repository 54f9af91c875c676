/**
 * Issue 30, item 2: the scheduled reports of a home with two supplier accounts (two real sandboxes,
 * test/e2e/accounts.ts) cover every account. On main, balance.csv, the history export and the
 * low-balance alert read the first account only: `second`'s balance, orders and low balance were
 * never reported. Each account now has its own files (docs/reports.md: a file per account, the
 * columns of before) and its own alert with its own runway.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { csv } from '../e2e/harness.js';
import { twoAccountConfigEnv, twoAccountHome, type TwoAccounts } from '../e2e/accounts.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { claimFile } from '../../src/claim/claim.js';
import { Runner } from '../../src/engine/runner.js';
import { Notifier } from '../../src/notify/notifier.js';
import { runBalanceReport } from '../../src/reports/balance.js';
import { runHistoryExport } from '../../src/reports/history.js';
import { LOW_BALANCE_FLAG, runLowBalanceCheck } from '../../src/reports/low-balance.js';

let t: TwoAccounts;
let rt: Runtime;
let server: Server | undefined;
afterEach(async () => {
  await rt?.close();
  await t?.main.close();
  await t?.second.close();
  server?.close();
  server = undefined;
  t?.home.remove();
});

const readCsv = (path: string): Record<string, string>[] => parse(readFileSync(path, 'utf8'), { columns: true }) as Record<string, string>[];

async function setup(extra: Record<string, string> = {}, opts: Parameters<typeof twoAccountHome>[0] = {}): Promise<void> {
  t = await twoAccountHome(opts);
  rt = openRuntime(loadConfig({ ...twoAccountConfigEnv(t), TOPUP_POLL_INTERVAL_MS: '200', ...extra }), silentLogger(), t.main.url);
}

/** 60 UC is cheaper at `second` (0.80), 325 UC at `main` (4.55): one batch spends on both. */
async function placeBatch(): Promise<void> {
  const file = join(t.home.dir, 'mixed.csv');
  writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456781'], ['PUBG-60', '5123456782'], ['PUBG-325', '5123456783']]));
  const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
  await new Runner(rt, { once: true, onlyBatch: batch.id }).run();
  expect(t.second.admin.ledger().orders).toHaveLength(2);
  expect(t.main.admin.ledger().orders).toHaveLength(1);
}

describe('reports of a home with two accounts', () => {
  it('balance report: one file per account (balance-<account>.csv), each with its own balance; no first-account balance.csv', async () => {
    await setup();
    await placeBatch();
    const result = await runBalanceReport(rt, Date.parse('2026-01-01T10:00:00Z'));
    const reports = join(t.home.outbox, 'reports');
    expect(result.accounts.map((a) => [a.account, a.file])).toEqual([['main', join(reports, 'balance-main.csv')], ['second', join(reports, 'balance-second.csv')]]);
    expect(existsSync(join(reports, 'balance.csv'))).toBe(false);
    const row = { at: '2026-01-01T10:00:00.000Z', currency: 'USD', reservedUsd: '0', mode: 'LIVE' };
    expect(readCsv(join(reports, 'balance-main.csv'))).toEqual([{ ...row, balanceUsd: String(t.main.admin.account().balanceUsd) }]);
    expect(readCsv(join(reports, 'balance-second.csv'))).toEqual([{ ...row, balanceUsd: String(t.second.admin.account().balanceUsd) }]);
    expect(t.second.admin.account().balanceUsd).toBeCloseTo(1000 - 1.6, 2);
  });

  it('history export: each account from its own history into its own file, each order once', async () => {
    await setup();
    await placeBatch();
    const now = Date.parse('2026-03-15T00:30:00Z');
    const first = await runHistoryExport(rt, { now });
    expect(first.exported).toBe(3);
    const reports = join(t.home.outbox, 'reports');
    const mainRows = readCsv(join(reports, 'history-main-2026-03.csv'));
    const secondRows = readCsv(join(reports, 'history-second-2026-03.csv'));
    expect(mainRows.map((r) => r.orderId)).toEqual(t.main.admin.ledger().orders.map((o) => String(o.orderId)));
    expect(secondRows.map((r) => r.orderId).sort()).toEqual(t.second.admin.ledger().orders.map((o) => String(o.orderId)).sort());
    expect(secondRows.map((r) => Number(r.amountUsd))).toEqual([0.8, 0.8]);
    expect(existsSync(join(reports, 'history-2026-03.csv'))).toBe(false);
    // Nothing new: nothing exported again, from either account.
    expect((await runHistoryExport(rt, { now })).exported).toBe(0);
    expect(readCsv(join(reports, 'history-second-2026-03.csv'))).toHaveLength(2);
  });

  it('low-balance alert: each account against the threshold, with its own runway and name; the other account stays quiet', async () => {
    const got: { event: string; text: string; data: Record<string, unknown> }[] = [];
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
    await setup({ TOPUP_LOW_BALANCE_USD: '100', TOPUP_WEBHOOK_URL: hook }, { secondBalanceUsd: 50 });
    const notifier = new Notifier(rt.config, rt.log, { retryDelaysMs: [50] });
    await placeBatch();
    expect(await runLowBalanceCheck(rt, notifier)).toBe('alerted');
    expect(await runLowBalanceCheck(rt, notifier)).toBe('still-low');
    // second's flag, not the first account's (nor `default`'s).
    expect(rt.meta.get(`${LOW_BALANCE_FLAG}:second`)).toBeDefined();
    expect(rt.meta.get(`${LOW_BALANCE_FLAG}:main`)).toBeUndefined();
    expect(rt.meta.get(LOW_BALANCE_FLAG)).toBeUndefined();
    t.second.admin.topup({ amountUsd: 500 });
    expect(await runLowBalanceCheck(rt, notifier)).toBe('cleared');
    await notifier.flush();
    expect(got.map((n) => [n.event, n.data.account])).toEqual([['low-balance', 'second'], ['low-balance-cleared', 'second']]);
    // Its runway at its own spending (1.60 USD over the last 7 days: reports/runway.ts), not the home's (6.15 USD).
    expect(got[0]!.data).toMatchObject({ balanceUsd: 48.4, thresholdUsd: 100, usdPerDay: 0.23 });
    expect(got[0]!.text).toMatch(/^Low balance on account second: 48\.4 USD, below the 100 USD threshold; runway about 211\.7 days at the last 7 days' pace \(0\.23 USD a day\)/);
  });
});
