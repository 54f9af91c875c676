/**
 * Trial s37 D1 and D2, with two real sandboxes and the real CLI (`topup submit`, `topup status`,
 * `topup review`): the cheaper account `second` is in maintenance, so every row moves to `main`
 * and is sent there as `<trxid>-main`.
 *
 * D1: the reseller's trxid is their key to join results to their records. The result (CSV and
 * workbook) keeps it in their trxid cell as they wrote it, and the trxid actually sent is in its own
 * column, `sentTrxid`. Before: the trxid cell was overwritten with `R1-1-main`.
 * D2: the same rows dropped again (an edited copy) are skipped as repeats of those purchases: their
 * result names the account that bought them and the trxid sent. Before: no account column at all,
 * and the order id alone (each account numbers its orders from ORD1000001) named two orders.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli, waitFor } from '../e2e/harness.js';
import { start, TOKEN } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client } from '../console/helpers.js';
import { conforms } from '../orderapi/conformance.js';
import { ordersOf, twoAccounts } from './two-sandboxes.js';

releaseAfterEach();

const pubg = (prefix: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => [`${prefix}-${i + 1}`, 'PUBG-60', String(5_123_456_600 + from + i)]);

async function workbookRows(file: string): Promise<Record<string, string>[]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  const ws = wb.worksheets[0]!;
  const text = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'object' && 'richText' in v ? (v as ExcelJS.CellRichTextValue).richText.map((r) => r.text).join('') : String(v));
  const header = (ws.getRow(1).values as unknown[]).map(text);
  const out: Record<string, string>[] = [];
  for (let r = 2; r <= ws.rowCount; r++) {
    const row = ws.getRow(r);
    out.push(Object.fromEntries(header.map((h, i) => [h, text(row.getCell(i).value)]).slice(1)));
  }
  return out;
}

describe('a row moved to another account keeps the reseller\'s trxid', () => {
  it('CSV result: the trxid cell as written, sentTrxid the one sent; status shows both; a re-drop names the account and the sent trxid', async () => {
    const { home, a, b, env } = await twoAccounts({ extra: 'max_queue_delay = "1s"' });
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });

    const file = join(home.dir, 'r1.csv');
    writeFileSync(file, csv([['trxid', 'pid', 'userId'], ...pubg('R1', 3)]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const rows = readResult(home, 'r1');
    expect(rows.map((x) => [x.trxid, x.status, x.account, x.sentTrxid])).toEqual([
      ['R1-1', 'completed', 'main', 'R1-1-main'],
      ['R1-2', 'completed', 'main', 'R1-2-main'],
      ['R1-3', 'completed', 'main', 'R1-3-main'],
    ]);
    for (const x of rows) expect(x.refusedBy).toMatch(new RegExp(`^second \\(trxid ${x.trxid}\\): second was in maintenance`));
    // The header names one trxid column (the reseller's, filled in place), then ours.
    const header = Object.keys(rows[0]!);
    expect(header.filter((h) => /trxid/i.test(h))).toEqual(['trxid', 'sentTrxid']);
    expect(header.slice(-3)).toEqual(['account', 'sentTrxid', 'refusedBy']);
    // What the supplier has: the sent trxids, bought once, on main.
    expect(ordersOf(a).map((o) => String(o.trxid)).sort()).toEqual(['R1-1-main', 'R1-2-main', 'R1-3-main']);
    expect(ordersOf(b)).toHaveLength(0);

    // `topup status BATCH`: the JSON has both; the table a `sent as` column.
    const batchId = (JSON.parse(r.stdout) as { batchId?: string; batch?: string; id?: string }).batchId;
    expect(batchId).toBeTruthy();
    const st = await runCli(['status', batchId!, '--json'], env);
    expect(st.code, st.stderr).toBe(0);
    expect((JSON.parse(st.stdout) as { rows: { trxid: string; sentTrxid: string }[] }).rows.map((x) => [x.trxid, x.sentTrxid])).toEqual([
      ['R1-1', 'R1-1-main'], ['R1-2', 'R1-2-main'], ['R1-3', 'R1-3-main'],
    ]);
    const table = await runCli(['status', batchId!], env);
    expect(table.stdout).toMatch(/sent as/);
    expect(table.stdout).toMatch(/R1-1 +R1-1-main/);

    // D2: the file dropped again, edited (a Status column added): skipped, as those purchases.
    const again = join(home.dir, 'r1-edited.csv');
    writeFileSync(again, csv([['trxid', 'pid', 'userId', 'Status'], ...pubg('R1', 3).map((x) => [...x, 'paid'])]));
    const re = await runCli(['submit', again, '--json'], env, { timeoutMs: 120_000 });
    expect([0, 1, 2]).toContain(re.code);
    const skipped = readResult(home, 'r1-edited');
    const firstOrders = new Map(rows.map((x) => [x.trxid, x.orderId]));
    expect(skipped.map((x) => [x.trxid, x.result_status, x.account, x.sentTrxid, x.orderId])).toEqual(
      ['R1-1', 'R1-2', 'R1-3'].map((t) => [t, 'skipped', 'main', `${t}-main`, firstOrders.get(t)]),
    );
    for (const x of skipped) expect(x.error).toMatch(new RegExp(`already bought under trxid ${x.trxid}: .* as order ${x.orderId} \\(completed\\) at account main under trxid ${x.trxid}-main; not bought again`));
    // Nothing bought again.
    expect(ordersOf(a)).toHaveLength(3);
    expect(ordersOf(b)).toHaveLength(0);
  }, 180_000);

  it('workbook result: the trxid cell as written, sentTrxid the one sent', async () => {
    // A home of its own: in the first one `second` is known paused already, and rows would go to `main` at once.
    const { home, a, b, env } = await twoAccounts({ extra: 'max_queue_delay = "1s"' });
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const wbIn = new ExcelJS.Workbook();
    const ws = wbIn.addWorksheet('orders');
    ws.addRow(['trxid', 'pid', 'userId']);
    for (const row of pubg('W1', 2, 10)) ws.addRow(row);
    const xlsx = join(home.dir, 'w1.xlsx');
    await wbIn.xlsx.writeFile(xlsx);
    const w = await runCli(['submit', xlsx, '--json'], env, { timeoutMs: 120_000 });
    expect(w.code, w.stderr.slice(-2000)).toBe(0);
    const wbRows = await workbookRows(join(home.outbox, 'w1.result.xlsx'));
    expect(wbRows.map((x) => [x.trxid, x.status, x.account, x.sentTrxid])).toEqual([
      ['W1-1', 'completed', 'main', 'W1-1-main'],
      ['W1-2', 'completed', 'main', 'W1-2-main'],
    ]);

    expect(ordersOf(a).map((o) => String(o.trxid)).sort()).toEqual(['W1-1-main', 'W1-2-main']);
  }, 120_000);

  it('a file without a trxid column: the derived trxid in `trxid`, the moved one in `sentTrxid`; the console\'s batch page shows both and finds the row by either', async () => {
    const { home, a, b, env } = await twoAccounts({ extra: 'max_queue_delay = "1s"' });
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const file = join(home.dir, 'plain.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456651'], ['PUBG-60', '5123456652']]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const rows = readResult(home, 'plain');
    for (const x of rows) {
      expect(x.status).toBe('completed');
      expect(x.trxid).not.toMatch(/-main$/);
      expect(x.sentTrxid).toBe(`${x.trxid}-main`);
      expect(x.refusedBy).toContain(`(trxid ${x.trxid})`);
    }
    expect(ordersOf(a).map((o) => String(o.trxid)).sort()).toEqual(rows.map((x) => x.sentTrxid).sort());

    // The console's batch page: the own trxid, "sent as" the moved one; found by either.
    const { daemon, url } = await start({ ...env, TOPUP_CONSOLE: '127.0.0.1:0' });
    try {
      const c = new Client(url);
      await c.get('/');
      const id = (JSON.parse(r.stdout) as { batchId: string }).batchId;
      const page = (await c.get(`/batches/${encodeURIComponent(id)}`)).text;
      for (const x of rows) expect(page).toContain(`>${x.trxid}<br><span class="muted" data-sent-trxid>sent as ${x.trxid}-main</span>`);
      // Its own trxid was derived: it is in no cell of the file, only in the row's moves.
      for (const q of [rows[0]!.trxid!, rows[0]!.sentTrxid!]) {
        const found = (await c.get(`/batches/${encodeURIComponent(id)}?q=${encodeURIComponent(q)}`)).text;
        expect(found, q).toMatch(/>1 rows match/);
      }
    } finally {
      await daemon.stop();
    }
  }, 180_000);

  it('topup review and the console\'s Review page: a moved row in review shows its own trxid, the one sent and the account', async () => {
    // `second` in maintenance moves the row to `main`, whose sends all fail (500, nothing shared): review.
    const { home, a, b, env } = await twoAccounts({ extra: 'max_queue_delay = "1s"', env: { TOPUP_REVIEW_AFTER_MS: '1500', TOPUP_REQUEST_TIMEOUT_MS: '1000' } });
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    a.admin.setFaults({ error5xxBeforeShare: 1 });
    const file = join(home.dir, 'rv.csv');
    writeFileSync(file, csv([['trxid', 'pid', 'userId'], ['RV-1', 'PUBG-60', '5123456661']]));
    await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    const [row] = readResult(home, 'rv');
    expect([row!.trxid, row!.status, row!.account, row!.sentTrxid]).toEqual(['RV-1', 'review', 'main', 'RV-1-main']);

    const list = await runCli(['review', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject([{ trxid: 'RV-1', sentTrxid: 'RV-1-main', account: 'main' }]);
    const table = await runCli(['review'], env);
    expect(table.stdout).toMatch(/sent as/);
    expect(table.stdout).toMatch(/RV-1 +RV-1-main +main/);
    expect(ordersOf(b)).toHaveLength(0);

    // The console's Review page: the own trxid, and where and under which trxid it was sent.
    const { daemon, url } = await start({ ...env, TOPUP_CONSOLE: '127.0.0.1:0' });
    try {
      const c = new Client(url);
      await c.get('/');
      const page = (await c.get('/review')).text;
      expect(page).toContain('<dt>trxid</dt><dd class="mono">RV-1 <span class="muted">(sent to main as RV-1-main)</span></dd>');
    } finally {
      await daemon.stop();
    }
  }, 120_000);
  it('a running daemon: the order API answers the shop\'s trxid, with sentAs the one sent (GET and the feed, which webhooks post)', async () => {
    const { a, b, env } = await twoAccounts({ extra: 'max_queue_delay = "1s"', env: { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' } });
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    let doc: Record<string, any> | undefined;
    const { daemon, url, call } = await start(env, { started: true, check: async (method, u, res, text) => conforms(doc!, method, u, res, text) });
    try {
      doc = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as Record<string, any>;
      const placed = await call('POST', '/api/v1/orders', { body: { trxid: 'SHOP-M-1', pid: 'PUBG-60', userId: '5123456671' } });
      expect(placed.status, placed.text).toBe(202);
      const order = await waitFor('the API order completed', async () => {
        const r = await call('GET', '/api/v1/orders/SHOP-M-1');
        return r.json?.status === 'completed' ? r.json : undefined;
      }, 90_000, 200);
      expect(order).toMatchObject({ trxid: 'SHOP-M-1', sentAs: 'SHOP-M-1-main', account: 'main' });
      // The feed (and each webhook: the same view, orders/view.ts) names the shop's trxid too.
      const feed = await call('GET', '/api/v1/orders?limit=100');
      const completed = (feed.json.events as { type: string; data: { trxid: string; sentAs?: string } }[]).filter((e) => e.type === 'order.completed');
      expect(completed.map((e) => [e.data.trxid, e.data.sentAs])).toEqual([['SHOP-M-1', 'SHOP-M-1-main']]);

      expect(ordersOf(b)).toHaveLength(0);
      expect(ordersOf(a).map((o) => String(o.trxid))).toEqual(['SHOP-M-1-main']);
    } finally {
      await daemon.stop();
    }
  }, 180_000);
});
