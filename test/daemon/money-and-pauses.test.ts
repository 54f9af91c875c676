import { join } from 'node:path';
import Database from 'better-sqlite3';
import { registerIdentity } from '../../src/kernel/identity.js';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, startDaemon, tempHome, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

function batchRow(h: TempHome): { state: string; wait_reason: string | null; wait_detail: string | null } | undefined {
  let db: Database.Database | undefined;
  try {
    db = new Database(join(h.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
    return db.prepare('SELECT state, wait_reason, wait_detail FROM batches ORDER BY seq DESC LIMIT 1').get() as never;
  } catch {
    return undefined; // not created yet
  } finally {
    db?.close();
  }
}

const rows = (n: number, pid = 'PUBG-325') => csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => [pid, `51234${String(10000 + i)}`])]);

describe.concurrent('§4 money check', () => {
  it('a batch the balance cannot cover waits (visible in the store), then starts by itself after a top-up', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 10 });
    const daemon = startDaemon(cliEnv(home, sb));
    home.drop('big.csv', rows(5)); // 5 × 4.55 = 22.75 USD
    await waitFor('waiting for balance', () => batchRow(home)?.wait_reason === 'balance');
    expect(batchRow(home)!.wait_detail).toMatch(/needs 22\.75 USD/);
    expect(sb.admin.ledger().orders).toHaveLength(0);
    sb.admin.topup({ amountUsd: 100 });
    await waitForResult(home, 'big');
    expect(readResult(home, 'big').map((r) => r.status)).toEqual(Array(5).fill('completed'));
    const s = readSummary(home, 'big');
    expect(s.balanceBeforeUsd).toBe(110);
    expect(s.balanceAfterUsd).toBeCloseTo(110 - 22.75, 2);
    expect(await daemon.stop()).toBe(0);
  }));

  it('a row refused with INSUFFICIENT BALANCE mid-batch is held, not failed, and goes out after a top-up', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 100 });
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_RATE_LIMITS: '2/1s' }));
    home.drop('mid.csv', rows(8));
    // Money leaves the account outside our batch while it runs (another tool, a refund reversal…).
    await waitFor('first orders', () => sb.admin.ledger().orders.length >= 2, 60_000, 20);
    sb.admin.setBalance({ balanceUsd: 5 });
    await waitFor('held for balance', () => batchRow(home)?.wait_reason === 'balance', 60_000);
    sb.admin.topup({ amountUsd: 100 });
    await waitForResult(home, 'mid');
    const result = readResult(home, 'mid');
    expect(result.map((r) => r.status)).toEqual(Array(8).fill('completed'));
    expect(sb.admin.ledger().orders).toHaveLength(8);
    expect(await daemon.stop()).toBe(0);
  }));
});

describe.concurrent('§4 money check across batches', () => {
  it('two batches never start on the same money: the later one waits while the earlier one still has to spend', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 12 });
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_RATE_LIMITS: '2/1s' }));
    home.drop('a.csv', rows(2)); // 9.10 USD
    await waitFor('a started', () => sb.admin.ledger().orders.length >= 1, 60_000, 20);
    home.drop('b.csv', rows(1, 'PUBG-325').replace('5123410000', '5123419999')); // 4.55 USD
    await waitForResult(home, 'a');
    await waitFor('b waiting for balance', () => batchRow(home)?.wait_reason === 'balance', 60_000);
    // No order was ever refused for money: the wait happened here, not at the API.
    expect(sb.admin.calls().filter((c) => c.status === 400)).toEqual([]);
    sb.admin.topup({ amountUsd: 10 });
    await waitForResult(home, 'b');
    expect(readResult(home, 'b').map((r) => r.status)).toEqual(['completed']);
    expect(await daemon.stop()).toBe(0);
  }));
});

describe.concurrent('§7 outcomes follow the classification', () => {
  it('MAINTENANCE pauses sending (polling goes on) and the batch resumes by itself when the window ends', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ fulfilment: { processingShare: 1, processingMs: [300, 600] } });
    sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const daemon = startDaemon(cliEnv(home, sb));
    home.drop('maint.csv', rows(3));
    await waitFor('paused', () => daemon.output().includes('sending paused by the API'));
    expect(sb.admin.ledger().orders).toHaveLength(0);
    sb.admin.setFaults({ maintenance: null });
    await waitForResult(home, 'maint', 60_000);
    expect(readResult(home, 'maint').map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(await daemon.stop()).toBe(0);
  }));

  it('an account problem stops all sending, keeps every row, and resumes once the account is restored', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_RATE_LIMITS: '2/1s' }));
    home.drop('acct.csv', rows(6));
    await waitFor('first order', () => sb.admin.ledger().orders.length >= 1, 60_000, 20);
    sb.admin.setAccount({ state: 'restricted' });
    await waitFor('sending stopped', () => daemon.output().includes('sending stopped: account problem'), 60_000);
    const placedWhileRestricted = sb.admin.ledger().orders.length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(sb.admin.ledger().orders.length).toBe(placedWhileRestricted);
    sb.admin.setAccount({ state: 'active' });
    await waitForResult(home, 'acct', 60_000);
    expect(readResult(home, 'acct').map((r) => r.status)).toEqual(Array(6).fill('completed'));
    expect(daemon.output()).toContain('ACCOUNT_RESTRICTED');
    expect(daemon.output()).not.toContain('canary-KEY');
    expect(await daemon.stop()).toBe(0);
  }));

  it('rejections become `rejected` with the API error; a price above maxPriceUsd at send time becomes `invalid`', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 0 });
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_CATALOG_MAX_AGE_MS: '1000' }));
    home.drop(
      'mixed.csv',
      csv([
        ['pid', 'userId', 'quantity', 'maxPriceUsd'],
        ['PUBG-60', '5123456789', '', '1.00'],
        ['KEY-PUBG-660', '', '3', ''],
        ['PUBG-325', '5123456789', '', ''],
      ]),
    );
    await waitFor('waiting for balance', () => batchRow(home)?.wait_reason === 'balance');
    // While it waits: the price rises above the cap, and the key pack runs out of stock.
    sb.admin.setProduct({ id: 'PUBG-60', price: 1.5 });
    sb.admin.setProduct({ id: 'KEY-PUBG-660', stock: 1 });
    await new Promise((r) => setTimeout(r, 1200));
    sb.admin.topup({ amountUsd: 100 });
    await waitForResult(home, 'mixed');
    const r = readResult(home, 'mixed');
    expect(r.map((x) => x.status)).toEqual(['invalid', 'rejected', 'completed']);
    expect(r[0]!.error).toMatch(/maxPriceUsd.*1\.5/);
    expect(r[1]!.error).toMatch(/STOCK/i);
    expect(sb.admin.ledger().orders).toHaveLength(1);
    expect(await daemon.stop()).toBe(0);
  }));
});

describe.concurrent('a batch waiting for balance', () => {
  it('still resends its rows in doubt (only a resend tells whether they were charged), and sends no new ones', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 0.5 });
    const daemon = startDaemon(cliEnv(home, sb));
    home.drop('short.csv', rows(2));
    await waitFor('waiting for balance', () => batchRow(home)?.wait_reason === 'balance');
    // As if an earlier process sent row 0 and died before the answer: it is in doubt.
    const db = new Database(join(home.jobs, 'topup.db'), { fileMustExist: true });
    registerIdentity(db); // a connection that writes rows needs the trxid fold its indexes use
    db.prepare(`UPDATE rows SET state = 'resending', attempts = 1, first_sent_at = ?, last_sent_at = ?, next_try_at = 0 WHERE idx = 0`)
      .run(Date.now(), Date.now());
    db.close();
    const submits = () => sb.admin.calls().filter((c) => c.route === 'POST /orders').length;
    await waitFor('the row in doubt resent', () => submits() >= 1, 30_000);
    expect(batchRow(home)!.wait_reason).toBe('balance');
    const ro = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
    const pendingRow = ro.prepare('SELECT state, attempts FROM rows WHERE idx = 1').get() as { state: string; attempts: number };
    ro.close();
    expect(pendingRow).toEqual({ state: 'pending', attempts: 0 });
    expect(sb.admin.ledger().orders).toHaveLength(0);
    expect(await daemon.stop()).toBe(0);
  }));
});

describe.concurrent('rows that never settle (TOPUP_REVIEW_AFTER_MS)', () => {
  // Resending stops after 2 s and at least 5 unanswered sends (about 8 s with the back-off);
  // history is checked 4 request timeouts (4 s) after that.
  const settings = { TOPUP_REVIEW_AFTER_MS: '2000', TOPUP_REQUEST_TIMEOUT_MS: '1000' };
  const submits = (sb: RunningSandbox) => sb.admin.calls().filter((c) => c.route === 'POST /orders').length;

  it('a row answered 500 on every send is resent with its trxid, then checked in history and ends review; nothing more is sent', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ faults: { error5xxBeforeShare: 1 } });
    const daemon = startDaemon(cliEnv(home, sb, settings));
    home.drop('stuck.csv', rows(2));
    await waitForResult(home, 'stuck', 60_000);
    const result = readResult(home, 'stuck');
    expect(result.map((r) => r.status)).toEqual(['review', 'review']);
    for (const r of result) {
      // Whichever bound came first (the sender's 5 unanswered sends, or dispatch/stall.ts's 2 ×
      // TOPUP_REVIEW_AFTER_MS in doubt), the row says it was in doubt, that history showed nothing, and
      // that an order can still appear.
      expect(r.error).toMatch(/^REVIEW: no attempt got a definite answer: (no definite answer|in doubt) since .*(sends unanswered|none settled it).*last: .*order history showed no order with this trxid at .*, but an order can still appear/);
    }
    expect(readSummary(home, 'stuck').review).toHaveLength(2);
    const sent = submits(sb);
    // Every row went out more than once (each send is one attempt on the row's one stored body).
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
    const stored = db.prepare('SELECT attempts, trxid FROM rows ORDER BY idx').all() as { attempts: number; trxid: string }[];
    db.close();
    expect(stored.every((r) => r.attempts >= 3)).toBe(true);
    expect(sent).toBe(stored.reduce((n, r) => n + r.attempts, 0));
    expect(result.map((r) => r.trxid)).toEqual(stored.map((r) => r.trxid));
    await new Promise((r) => setTimeout(r, 1_500));
    expect(submits(sb)).toBe(sent);
    expect(sb.admin.ledger().orders).toHaveLength(0);
    expect(await daemon.stop()).toBe(0);
  }));

  it('a row whose first send created the order but whose every answer was lost is found in history, not left for review', released(async () => {
    const home = tempHome();
    // The first send creates the order and its answer is held 6 s (the client gives up at 1 s);
    // resends meanwhile hear DUPLICATE_IN_FLIGHT, and every send after that is answered 500.
    const sb = await inProcessSandbox({ faults: { slowShare: 1, slowMs: 6_000 } });
    const daemon = startDaemon(cliEnv(home, sb, settings));
    home.drop('lost.csv', rows(1));
    await waitFor('the order created', () => sb.admin.ledger().orders.length === 1, 60_000, 20);
    sb.admin.setFaults({ slowShare: 0, error5xxBeforeShare: 1 });
    await waitForResult(home, 'lost', 60_000);
    const [row] = readResult(home, 'lost');
    const [order] = sb.admin.ledger().orders;
    expect(row).toMatchObject({ status: 'completed', orderId: order!.orderId });
    expect(sb.admin.ledger().orders).toHaveLength(1);
    expect(submits(sb)).toBeGreaterThanOrEqual(2);
    // It was settled by the history check, not by a resend that finally got through.
    expect(daemon.output()).toMatch(/no definite answer in time: no more resends, checking order history|met no settling answer within the stall bound: no more resends, checking order history/);
    expect(daemon.output()).toContain('found the order of an unanswered row in history');
    expect(await daemon.stop()).toBe(0);
  }));
});
