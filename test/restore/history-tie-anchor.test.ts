/**
 * Review of restore36 (the restore lookup's history read bounded by the copy): sweep() stops at the
 * first page that lists an order this home placed before `since` (an "anchor": a row whose answer
 * was recorded before it), as if every later page held only older orders. A supplier's history is
 * newest first by its own createdAt, which real panels keep to the second (PHP/MySQL DATETIME), and
 * orders of one second come in no promised order. Here: row 0 failed over to `second` and was bought
 * there (its answer recorded at .100); row 1, pending in the copy (taken at .600), was failed over by
 * the lost store and bought on `second` as tu-row-1-second in the same second. `second`'s history
 * lists the anchor on page 1 and row 1's order on page 2 (promised: hasMore, total). The lookup
 * stopped at page 1, never saw tu-row-1-second, left row 1 `pending` on `main`, and the runner would
 * buy it there again. Real store, clients and reconcile; both accounts are one scripted HTTP
 * supplier on 127.0.0.1 told apart by key.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reconcileIfRestored } from '../../src/ops/restore-reconcile.js';
import { RECONCILE_KEY } from '../../src/store/backup.js';
import { pubgRow } from '../unit/fake-supplier.js';
import { CATALOG } from '../unit/scripted-supplier.js';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';

let server: Server | undefined;
let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  server?.close();
});

describe('a history whose orders of one second are listed in any order', () => {
  it('a row bought on `second` after the copy, listed on the page after an anchor of the same second, is not left to be bought on `main`', async () => {
    const base = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const second = new Date(base).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const entry = (orderId: string, trxid: string, idx: number, status: string) => ({ orderId, trxid, status, createdAt: second, game: 'pubg', packName: '60 UC', userId: String(5_123_456_789 + idx), pid: 'PUBG-60' });
    const seen: string[] = [];
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const acct = req.headers['x-api-key'] === 'second-key-0000000002' ? 'second' : 'main';
      seen.push(`${acct} ${req.method} ${req.url}`);
      let body: unknown = { success: false, error: 'not scripted' };
      let status = 500;
      if (url.pathname === '/history') {
        status = 200;
        const page = Number(url.searchParams.get('page') ?? '1');
        if (acct === 'main') body = { success: true, count: 0, total: 0, hasMore: false, orders: [] };
        else if (page === 1) body = { success: true, count: 1, total: 2, hasMore: true, orders: [entry('ORD-A', 'tu-row-0-second', 0, 'completed')] };
        else if (page === 2) body = { success: true, count: 1, total: 2, hasMore: false, orders: [entry('ORD-R', 'tu-row-1-second', 1, 'processing')] };
        else body = { success: true, count: 0, total: 2, hasMore: false, orders: [] };
      } else if (url.pathname === '/services') { status = 200; body = CATALOG.services; }
      else if (url.pathname === '/products') { status = 200; body = CATALOG.products(); }
      else if (url.pathname === '/balance') { status = 200; body = { success: true, balanceUsd: 100, currency: 'USD' }; }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'tie-anchor-'));
    const file = join(dir, 'accounts.toml');
    writeFileSync(file, `[[account]]\nname = "main"\nurl = "${url}"\nkey = "main-key-00000000001"\n\n[[account]]\nname = "second"\nurl = "${url}"\nkey = "second-key-0000000002"\n`, { mode: 0o600 });
    const home = mkdtempSync(join(tmpdir(), 'tie-anchor-home-'));
    rt = openRuntime(loadConfig({ TOPUP_HOME: home, TOPUP_ACCOUNTS_FILE: file, TOPUP_RATE_MARGIN_MS: '0', TOPUP_REQUEST_TIMEOUT_MS: '2000' }), pino({ level: 'silent' }), url);
    const now = Date.now();
    rt.batches.create({ id: 'b1', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b1/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, owner: rt.owner, leaseUntil: now + 86_400_000, now });
    rt.batches.open('b1', ['pid', 'userId']);
    const r0 = pubgRow(0);
    rt.rows.insertAll('b1', [{ ...r0, account: 'second', request: { ...r0.request!, trxid: 'tu-row-0-second' } }, { ...pubgRow(1), account: 'main' }], now);
    const sql = (idx: number, set: string, ...args: unknown[]) => void rt!.db.prepare(`UPDATE rows SET ${set} WHERE batch_id = 'b1' AND idx = ?`).run(...args, idx);
    // The copy: row 0 moved to `second` and answered there (ORD-A) at .100; row 1 pending on `main`; copy at .600.
    sql(0, `state = 'completed', order_id = 'ORD-A', attempts = 1, first_sent_at = ?, last_sent_at = ?, updated_at = ?`, base + 50, base + 50, base + 100);
    rt.meta.setJson(RECONCILE_KEY, { kind: 'backup', copy: { takenAt: base + 600 }, restoredAt: Date.now(), from: null, detail: 'a copy taken by topup backup' });
    await reconcileIfRestored(rt);
    const r = rt.rows.get('b1', 1)!;
    const pages = seen.filter((s) => s.startsWith('second GET /history'));
    // Found bought on `second` (settled there) or held for a person; never left pending on `main`.
    expect({ state: r.state, account: r.account, pages }).not.toMatchObject({ state: 'pending', account: 'main' });
  });
});
