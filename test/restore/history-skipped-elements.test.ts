/**
 * Stop 37's review (issue 32): the restore lookup met history elements it cannot take as orders
 * (two trxid echoes that disagree: `trxid` ours beside `trx_id` another's, api/schemas.ts
 * Order.trxidConflict) and its report said nothing of them. They may be the very order looked for,
 * so they prove nothing: the report (outbox/reports/restore-*.json) and `topup status`
 * (restoreStatus) now say how many were skipped at each account and that they prove nothing, and a
 * row not found at such an account is not read as unbought there. Before, the client refused the
 * whole page, and the first start's reconcile tried again for ever with nothing in its report.
 * Real store, clients and reconcile; both accounts are one scripted HTTP supplier on 127.0.0.1
 * told apart by key.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { reconcileIfRestored, restoreStatus } from '../../src/ops/restore-reconcile.js';
import { RECONCILE_KEY } from '../../src/store/backup.js';
import { loadConfig } from '../../src/config/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { pubgRow } from '../unit/fake-supplier.js';
import { CATALOG } from '../unit/scripted-supplier.js';

let server: Server | undefined;
let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  server?.close();
});

/** An element naming two trxids that disagree: which is its own cannot be told. */
const conflicting = (orderId: string, a: string, b: string) => ({ orderId, trxid: a, trx_id: b, status: 'completed', game: 'pubg', packName: '60 UC', userId: '5999999999', pid: 'PUBG-60' });

describe('history elements the restore lookup skips (two trxid echoes that disagree)', () => {
  it('are counted per account in the report and in topup status as proving nothing; a row not found there is not sent elsewhere', async () => {
    const own = { orderId: 'ORD-0', trxid: 'tu-row-0', status: 'completed', game: 'pubg', packName: '60 UC', userId: '5123456789', pid: 'PUBG-60' };
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const acct = req.headers['x-api-key'] === 'second-key-0000000002' ? 'second' : 'main';
      let body: unknown = { success: false, error: 'not scripted' };
      let status = 500;
      if (url.pathname === '/history') {
        status = 200;
        const page = Number(url.searchParams.get('page') ?? '1');
        const orders = page > 1 ? [] : acct === 'main'
          ? [own, conflicting('ORD-C1', 'W-1', 'W-2')]
          : [conflicting('ORD-C2', 'W-3', 'W-4'), conflicting('ORD-C3', 'W-5', 'W-6')];
        body = { success: true, count: orders.length, total: page > 1 ? 0 : orders.length, hasMore: false, orders };
      } else if (url.pathname === '/services') { status = 200; body = CATALOG.services; }
      else if (url.pathname === '/products') { status = 200; body = CATALOG.products(); }
      else if (url.pathname === '/balance') { status = 200; body = { success: true, balanceUsd: 100, currency: 'USD' }; }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'skipped-elements-'));
    const file = join(dir, 'accounts.toml');
    writeFileSync(file, `[[account]]\nname = "main"\nurl = "${url}"\nkey = "main-key-00000000001"\n\n[[account]]\nname = "second"\nurl = "${url}"\nkey = "second-key-0000000002"\n`, { mode: 0o600 });
    const home = mkdtempSync(join(tmpdir(), 'skipped-elements-home-'));
    rt = openRuntime(loadConfig({ TOPUP_HOME: home, TOPUP_ACCOUNTS_FILE: file, TOPUP_RATE_MARGIN_MS: '0', TOPUP_REQUEST_TIMEOUT_MS: '5000' }), pino({ level: 'silent' }), url);
    const now = Date.now();
    rt.batches.create({ id: 'b1', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b1/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, owner: rt.owner, leaseUntil: now + 86_400_000, now });
    rt.batches.open('b1', ['pid', 'userId']);
    // Both rows pending on `main` in the copy: row 0 was bought there after it (ORD-0), row 1 is found nowhere.
    rt.rows.insertAll('b1', [{ ...pubgRow(0), account: 'main' }, { ...pubgRow(1), account: 'main' }], now);
    rt.meta.setJson(RECONCILE_KEY, { kind: 'backup', copy: { takenAt: now - 60_000 }, restoredAt: now, from: null, detail: 'a copy taken by topup backup' });
    // One try: before, the page was refused and the reconcile tried again every 15 s for ever.
    let tries = 0;
    const report = await reconcileIfRestored(rt, { stopping: () => tries++ > 0 });
    expect(report, 'the reconcile ended with a report').not.toBeNull();
    const written = JSON.parse(readFileSync(report!.file!, 'utf8')) as { skippedHistory?: { byAccount: Record<string, number>; meaning: string } };
    expect(written.skippedHistory?.byAccount).toEqual({ main: 1, second: 2 });
    expect(written.skippedHistory?.meaning).toMatch(/two trxid echoes that disagree.*prove nothing/);
    const line = restoreStatus(rt.meta, Date.now())!.line;
    expect(line).toMatch(/history elements skipped by the lookup: main 1, second 2 .*prove nothing/);
    // Row 0 is found under its own trxid and settled; row 1 could be one of the skipped elements:
    // never left pending to be sent (it may have moved to `second` and been bought there).
    expect(rt.rows.get('b1', 0)!.orderId).toBe('ORD-0');
    const r1 = rt.rows.get('b1', 1)!;
    expect(r1.state).toBe('review');
    expect(r1.error, r1.error ?? "").toMatch(/prove nothing/);
  }, 120_000);
});
