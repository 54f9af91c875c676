/**
 * Issue 32: what the restore lookup of API orders costs. In the window after a restore, every new
 * API order on a home with two accounts is looked up at every account before it is sent
 * (test/restore/api-resend-no-replica.test.ts). Read naively, each lookup would read every account's
 * history back to before the copy was taken: pages per order growing with the account's orders. The
 * window's readings are kept in the store (ops/restore-reconcile.ts HistoryCache): the first lookup
 * reads back to the window's start, each later one reads no page (since issue 32's sixth turn;
 * before it, one newest page per lookup).
 *
 * Measured on the real sandbox's call log: `second` holds 121 orders (3 pages of 50); eight orders
 * posted one after another after the restore, each sent once its lookup found it nowhere. One
 * reading at `second`, kept for the window: it ends at the first order this home placed there before
 * the copy (the filler: page 1), at most the 3 pages back to the copy; no page per later order
 * (before: 3 + up to 8); and every order is bought once, on `main`.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, waitFor, waitForResult, withOwnRelease } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const TOKEN = 'restore-api-lookup-cost-token-0123456789';
const FILLER = csv([['pid', 'userId', 'trxid'], ...Array.from({ length: 120 }, (_, i) => ['PUBG-60', `5123458${String(i).padStart(3, '0')}`, `FILL-${i}`])]);
const ORDERS = 8;

describe('the restore lookup of API orders after a restore', () => {
  it('reads the newest page per order once the history was read back to the copy, and buys each order once', () => withOwnRelease(async () => {
    const { home, a, b, env: base } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const env: NodeJS.ProcessEnv = { ...base, TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' };
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const first = await start(env);
    home.drop('fill.csv', FILLER);
    await waitForResult(home, 'fill', 120_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'offsite'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    expect((await first.call('POST', '/api/v1/orders', { body: { trxid: 'SHOP-X', pid: 'PUBG-60', userId: '5123456011', queue: true } })).status).toBe(202);
    await waitFor('bought on second', () => ledgerTrxids(b).includes('SHOP-X-second'), 60_000, 200);
    await first.daemon.stop();
    expect(ledgerTrxids(b).length).toBe(121);
    a.admin.setFaults({ maintenance: null });
    rmSync(home.jobs, { recursive: true, force: true });
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);

    const second = await start(env);
    await waitFor('reconciled', () => /sending starts now/i.test(second.daemon.output()), 90_000, 200);
    b.admin.resetCalls();
    for (let i = 0; i < ORDERS; i++) {
      const trxid = `SHOP-N${i}`;
      expect((await second.call('POST', '/api/v1/orders', { body: { trxid, pid: 'PUBG-60', userId: `51234560${20 + i}`, queue: true } })).status).toBe(202);
      await waitFor(`${trxid} bought`, () => ledgerTrxids(a).includes(trxid), 60_000, 100);
    }
    const pages = b.admin.calls().filter((c) => c.route.includes('history')).length;
    await second.daemon.stop();
    console.log(`history pages read at second for ${ORDERS} orders looked up after the restore: ${pages}`);
    expect(ledgerTrxids(a).sort()).toEqual(Array.from({ length: ORDERS }, (_, i) => `SHOP-N${i}`).sort());
    expect(ledgerTrxids(b).filter((t) => t.startsWith('SHOP-N'))).toEqual([]);
    expect(storedRows(home).filter((r) => r.trxid?.startsWith('SHOP-N')).every((r) => r.account === 'main')).toBe(true);
    // One reading, kept for the window: down to the first order this home placed there before the
    // copy (page 1 here: the filler), at most the 3 pages back to the copy; no page per later order.
    expect(pages).toBeGreaterThanOrEqual(1);
    expect(pages).toBeLessThanOrEqual(3);
  }), 300_000);
});
