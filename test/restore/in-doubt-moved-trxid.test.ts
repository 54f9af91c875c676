/**
 * Stop 38's CI failure (test/backup/restore-after-failover.test.ts, the hand copy, once in 2,487):
 * the copy caught MV-1 in `sending` (the paused account's probe, MAINTENANCE on its way back). The
 * first start after the restore takes the dead daemon's batch, and the store's batches_taken_over
 * trigger makes that row `resending` in the same UPDATE; decide() settled a row found bought under
 * a moved trxid only from pending/sending/verifying, so MV-1 went to review ("REVIEW: after a
 * restore: it was bought at second as MV-1-second (order ORD1000003) after the copy, and the copy
 * has it resending at main") although it was bought once, at `second`, and `main`'s history, read
 * back to before the copy with every order's trxid, showed no purchase under MV-1.
 *
 * What is right for money: a row in doubt on its own account (`resending`, `searching`) whose own
 * account's history reaches back, echoes trxids and lists nothing under its own trxid, and which is
 * found bought exactly once elsewhere under the trxid a move gives it, was bought once, there: it is
 * settled as moved and never sent anywhere. When its own account's history cannot prove that
 * absence (no trxids shown, not reaching back), a person decides (review), as before.
 *
 * Real store, clients and reconcile; both accounts are one scripted HTTP supplier on 127.0.0.1 told
 * apart by key (as history-tie-anchor.test.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { reconcileIfRestored } from '../../src/ops/restore-reconcile.js';
import { RECONCILE_KEY } from '../../src/store/backup.js';
import { pubgRow } from '../unit/fake-supplier.js';
import { CATALOG } from '../unit/scripted-supplier.js';
import { loadConfig } from '../../src/config/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';

let server: Server | undefined;
let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  server?.close();
  server = undefined;
});

type MainHistory = 'echoes trxids' | 'shows no trxids' | 'does not reach back';

/**
 * A copy whose row 0 is `copyState` on `main` (sent there once before the copy), bought after the
 * copy on `second` as tu-row-0-second; the batch held by the daemon that ran before the restore
 * (gone: its lease ran out). Returns the row after the first start's reconcile.
 */
async function afterRestore(copyState: 'sending' | 'resending' | 'searching', main: MainHistory) {
  const base = Date.now() - 60_000;
  const at = new Date(base + 30_000).toISOString();
  const player = String(5_123_456_789);
  // Someone else's order on `main` (another player), made after the copy: the history lists orders.
  const other = { orderId: 'ORD-M', status: 'completed', createdAt: at, game: 'pubg', packName: '60 UC', userId: '5999999999', pid: 'PUBG-60', ...(main === 'shows no trxids' ? {} : { trxid: 'SHOP-77' }) };
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const acct = req.headers['x-api-key'] === 'second-key-0000000002' ? 'second' : 'main';
    let body: unknown = { success: false, error: 'not scripted' };
    let status = 500;
    if (url.pathname === '/history') {
      status = 200;
      const page = Number(url.searchParams.get('page') ?? '1');
      if (acct === 'second') {
        body = page === 1
          ? { success: true, count: 1, total: 1, hasMore: false, orders: [{ orderId: 'ORD-S', trxid: 'tu-row-0-second', status: 'completed', createdAt: at, game: 'pubg', packName: '60 UC', userId: player, pid: 'PUBG-60' }] }
          : { success: true, count: 0, total: 1, hasMore: false, orders: [] };
      } else if (main === 'does not reach back') {
        // More promised, then an empty page: the read ends without reaching back to the copy.
        body = page === 1 ? { success: true, count: 1, hasMore: true, orders: [other] } : { success: true, count: 0, hasMore: true, orders: [] };
      } else {
        body = page === 1 ? { success: true, count: 1, total: 1, hasMore: false, orders: [other] } : { success: true, count: 0, total: 1, hasMore: false, orders: [] };
      }
    } else if (url.pathname === '/services') { status = 200; body = CATALOG.services; }
    else if (url.pathname === '/products') { status = 200; body = CATALOG.products(); }
    else if (url.pathname === '/balance') { status = 200; body = { success: true, balanceUsd: 100, currency: 'USD' }; }
    else if (url.pathname === '/orders') { status = 500; body = { success: false, error: 'this test sends nothing' }; }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'in-doubt-moved-'));
  const file = join(dir, 'accounts.toml');
  writeFileSync(file, `[[account]]\nname = "main"\nurl = "${url}"\nkey = "main-key-00000000001"\n\n[[account]]\nname = "second"\nurl = "${url}"\nkey = "second-key-0000000002"\n`, { mode: 0o600 });
  const home = mkdtempSync(join(tmpdir(), 'in-doubt-moved-home-'));
  rt = openRuntime(loadConfig({ TOPUP_HOME: home, TOPUP_ACCOUNTS_FILE: file, TOPUP_RATE_MARGIN_MS: '0', TOPUP_REQUEST_TIMEOUT_MS: '2000' }), pino({ level: 'silent' }), url);
  // Held by the daemon that ran before the restore; its lease ran out (the reconcile takes it).
  rt.batches.create({ id: 'b1', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b1/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, owner: 'gone-host:1:old', leaseUntil: base, now: base });
  rt.batches.open('b1', ['pid', 'userId']);
  rt.rows.insertAll('b1', [{ ...pubgRow(0), account: 'main' }], base);
  // The copy: the row sent once to `main` (its intent committed, the answer not yet recorded).
  rt.db.prepare(`UPDATE rows SET state = ?, attempts = 1, first_sent_at = ?, last_sent_at = ?, doubt_since = ?, updated_at = ? WHERE batch_id = 'b1' AND idx = 0`)
    .run(copyState, base + 100, base + 100, copyState === 'sending' ? null : base + 100, base + 100);
  rt.meta.setJson(RECONCILE_KEY, { kind: 'mark', copy: null, restoredAt: null, from: null, detail: 'a copy put back by hand', since: base + 200 });
  const report = await reconcileIfRestored(rt);
  const r = rt.rows.get('b1', 0)!;
  return { row: { state: r.state, account: r.account, trxid: r.trxid, orderId: r.orderId }, error: r.error, report };
}

describe('a row in doubt on its own account, found bought once on another under the trxid a move gives it', () => {
  it('the copy caught it `sending` (taken over: `resending`), main\'s history proves nothing under its own trxid: settled as moved, never sent', async () => {
    const { row, error, report } = await afterRestore('sending', 'echoes trxids');
    expect(error, `the row went to review: ${error}`).toBeNull();
    expect(row).toEqual({ state: 'completed', account: 'second', trxid: 'tu-row-0-second', orderId: 'ORD-S' });
    expect(report!.settled.map((s) => [s.trxid, s.how])).toEqual([['tu-row-0-second', 'moved trxid']]);
    expect(report!.needsPerson).toEqual([]);
  });

  it('the copy has it `resending` or `searching`: the same', async () => {
    for (const state of ['resending', 'searching'] as const) {
      const { row, error } = await afterRestore(state, 'echoes trxids');
      expect(error, `${state}: the row went to review: ${error}`).toBeNull();
      expect(row, state).toEqual({ state: 'completed', account: 'second', trxid: 'tu-row-0-second', orderId: 'ORD-S' });
      await rt!.close();
      rt = undefined;
      server!.close();
      server = undefined;
    }
  });

  it('main\'s history shows no trxids: it cannot prove the row was not bought there too, so a person decides', async () => {
    const { row, error, report } = await afterRestore('sending', 'shows no trxids');
    expect(row).toEqual({ state: 'review', account: 'main', trxid: 'tu-row-0', orderId: null });
    expect(error).toMatch(/^REVIEW: after a restore: it was bought at second as tu-row-0-second \(order ORD-S\) after the copy, but the copy has it in doubt on main/);
    expect(error).toMatch(/none of the orders in its history shows a trxid/);
    expect(report!.needsPerson).toHaveLength(1);
  });

  it('main\'s history does not reach back to the copy: a person decides', async () => {
    const { row, error } = await afterRestore('resending', 'does not reach back');
    expect(row).toEqual({ state: 'review', account: 'main', trxid: 'tu-row-0', orderId: null });
    expect(error).toMatch(/^REVIEW: after a restore: it was bought at second as tu-row-0-second \(order ORD-S\) after the copy, but the copy has it in doubt on main/);
    expect(error).toMatch(/could not be read back/);
  });
});
