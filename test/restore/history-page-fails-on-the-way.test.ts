/**
 * The simulator, seed 3838 (stop 38, test/sim/found/restore-history-page-errors.json): after a
 * restore, the reconcile-first start reads every account's history back to the copy. One page
 * that failed on the way (a 500, an HTML 502, a body cut short) ended the whole try, and the next
 * try (15 s later) began again at page 1 of every account. With a busy history (other buyers'
 * orders, two a second) and one read in five failing, the pages back to the copy outgrew what a
 * try could read without a failure: the reconcile never finished, nothing was sent for hours, no
 * report. Reading a page changes nothing, so the page is read again (as a 429 was).
 * Real store, clients and reconcile; the supplier is a scripted HTTP server on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { reconcileIfRestored } from '../../src/ops/restore-reconcile.js';
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

/** Another buyer's order: nothing of this home. */
const other = (n: number) => ({ orderId: `OTHER-${n}`, trxid: `OTHER-T-${n}`, status: 'completed', game: 'pubg', packName: '60 UC', userId: `59${String(n).padStart(8, '0')}`, pid: 'PUBG-60' });

describe('the restore lookup meets a history page that fails on the way', () => {
  it('reads that page again and finishes in the same try, settling the row bought after the copy', async () => {
    const own = { orderId: 'ORD-0', trxid: 'tu-row-0', status: 'completed', game: 'pubg', packName: '60 UC', userId: '5123456789', pid: 'PUBG-60' };
    // Page 2 fails twice on the way (a 500, then an HTML 502), then answers.
    const failures = [
      { status: 500, type: 'application/json', body: JSON.stringify({ success: false, error: 'INTERNAL ERROR' }) },
      { status: 502, type: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1></body></html>' },
    ];
    const reads: number[] = [];
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      let body: unknown = { success: false, error: 'not scripted' };
      let status = 500;
      if (url.pathname === '/history') {
        const page = Number(url.searchParams.get('page') ?? '1');
        reads.push(page);
        const fail = page === 2 ? failures.shift() : undefined;
        if (fail) {
          res.writeHead(fail.status, { 'content-type': fail.type });
          res.end(fail.body);
          return;
        }
        status = 200;
        const orders = page === 1 ? [other(1), other(2)] : page === 2 ? [other(3), other(4)] : page === 3 ? [own, other(5)] : [];
        body = { success: true, count: orders.length, total: 6, hasMore: page < 3, orders };
      } else if (url.pathname === '/services') { status = 200; body = CATALOG.services; }
      else if (url.pathname === '/products') { status = 200; body = CATALOG.products(); }
      else if (url.pathname === '/balance') { status = 200; body = { success: true, balanceUsd: 100, currency: 'USD' }; }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = mkdtempSync(join(tmpdir(), 'page-fails-'));
    const file = join(dir, 'accounts.toml');
    writeFileSync(file, `[[account]]\nname = "main"\nurl = "${url}"\nkey = "main-key-00000000001"\n`, { mode: 0o600 });
    const home = mkdtempSync(join(tmpdir(), 'page-fails-home-'));
    rt = openRuntime(loadConfig({ TOPUP_HOME: home, TOPUP_ACCOUNTS_FILE: file, TOPUP_RATE_MARGIN_MS: '0', TOPUP_REQUEST_TIMEOUT_MS: '5000' }), pino({ level: 'silent' }), url);
    const now = Date.now();
    rt.batches.create({ id: 'b1', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b1/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, owner: rt.owner, leaseUntil: now + 86_400_000, now });
    rt.batches.open('b1', ['pid', 'userId']);
    // Pending on `main` in the copy; bought there after it (ORD-0, on page 3).
    rt.rows.insertAll('b1', [{ ...pubgRow(0), account: 'main' }], now);
    rt.meta.setJson(RECONCILE_KEY, { kind: 'backup', copy: { takenAt: now - 60_000 }, restoredAt: now, from: null, detail: 'a copy taken by topup backup' });
    // One try: before, the 500 on page 2 ended it (and every later try met its own failing page).
    let tries = 0;
    const report = await reconcileIfRestored(rt, { stopping: () => tries++ > 0 });
    expect(report, `the reconcile ended with a report in one try (pages read: ${reads.join(', ')})`).not.toBeNull();
    expect(reads).toEqual([1, 2, 2, 2, 3]);
    expect(JSON.parse(readFileSync(report!.file!, 'utf8'))).toBeTruthy();
    expect(rt.rows.get('b1', 0)).toMatchObject({ orderId: 'ORD-0', state: 'completed' });
  }, 120_000);
});
