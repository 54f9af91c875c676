/**
 * Issue 11, the money cases: answers real deployments send, and what each must do to a row.
 * The supplier is a small HTTP server on 127.0.0.1 answering what each test scripts (the one part
 * that cannot be real here); the client, the store, the sender, the poller and the history check
 * are the real ones, on a real SQLite file in a temp home. Every test here failed on the code
 * before issue 11 (the reading and the money rules it fixes are named in each title).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime.js';
import { sendRow } from '../../src/dispatch/sender.js';
import { Pauses } from '../../src/account/pauses.js';
import { Poller } from '../../src/poll/poller.js';
import { verifyRow } from '../../src/poll/verify.js';
import { checkFunds } from '../../src/account/funds.js';
import type { NewRow } from '../../src/store/rows.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

type Answer = { status?: number; body: unknown; headers?: Record<string, string> };
type Script = (req: IncomingMessage, body: string) => Answer;

/** A world whose supplier answers through `script` (which may be swapped with `set`). */
async function world(rows: NewRow[], env: Record<string, string> = {}) {
  let script: Script = () => ({ status: 500, body: 'not scripted' });
  const seen: string[] = [];
  const rt = await supplierWorld(
    (req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url}`);
        const a = script(req, body);
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers });
        res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
      });
    },
    rows,
    env,
  );
  return { rt, seen, set: (s: Script) => void (script = s) };
}

function deps(rt: Runtime) {
  const events: string[] = [];
  const pauses = new Pauses(rt.meta, 30_000);
  return {
    rt,
    pauses,
    pausesOf: () => pauses,
    events,
    onBalanceShort: (b: string) => void events.push(`short:${b}`),
    onPause: (kind: string, code: string) => void events.push(`pause:${kind}:${code}`),
  };
}

const keyRow = (idx: number, quantity = 2): NewRow => ({
  idx, line: idx + 2, cells: ['KEY-PUBG-660', String(quantity)],
  request: { pid: 'KEY-PUBG-660', trxid: `tu-key-${idx}`, quantity }, error: null,
  productId: 'KEY-PUBG-660', slug: 'gamekeypubg', packName: 'PUBG 660 UC key', quantity, unitPriceUsd: 9, expectedUsd: 9 * quantity,
});

const processing = (rt: Runtime, idx: number, orderId: string): void =>
  void rt.db.prepare(`UPDATE rows SET state = 'processing', attempts = 1, order_id = ?, first_sent_at = ?, next_poll_at = 0 WHERE batch_id = 'b1' AND idx = ?`)
    .run(orderId, Date.now() - 1_000, idx);

describe('tolerant reading: what real deployments send is read, never stalls a row', () => {
  it('a catalog with "price": "0.92" and "quantity": null is usable (before: every batch waited for the catalog forever)', async () => {
    const w = await world([]);
    w.set((req) =>
      req.url === '/services'
        ? { body: { success: true, services: [{ productName: 'PUBG', slug: 'pubg', gameName: 'PUBG', required: [{ field: 'userId', label: 'Player ID' }], status: 'active', serverIdOptions: null }] } }
        : { body: { success: 'true', products: [{ id: 'PUBG-60', slug: 'pubg', gameName: 'PUBG', serviceName: '60 UC', category: 'topup', price: '0.92', status: 'active', quantity: null, inStock: null }] } },
    );
    const { index } = await w.rt.account.catalog.get();
    expect(index.byPid('PUBG-60')?.product).toMatchObject({ price: 0.92, status: 'active' });
    expect(index.byPid('PUBG-60')?.product.quantity).toBeUndefined();
  });

  it('a submit answered with "error": null, "amountUsd": "4.55", "status": "Completed" completes the row (before: unreadable, resent for 24 h)', async () => {
    const w = await world([pubgRow(0)]);
    w.set(() => ({ body: { orderCreated: true, orderId: 7001, status: 'Completed', amountUsd: '4.55', error: null, codes: null, refunded: null, userId: 5123456789 } }));
    expect(await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('placed');
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'completed', orderId: '7001', amountUsd: 4.55, error: null });
    expect(w.seen.filter((s) => s.startsWith('POST'))).toHaveLength(1);
  });

  it('polling GET /orders/:id that answers "status": "Canceled", "refunded": "true" ends the row (before: polling failed forever)', async () => {
    const w = await world([pubgRow(0)]);
    processing(w.rt, 0, 'ORD-1');
    w.set(() => ({ body: { success: true, data: { id: 'ORD-1', status: 'Canceled', refunded: 'true', error: 'INVALID PLAYER', amountUsd: '0.92' } } }));
    const r = await new Poller(w.rt, w.rt.account).round(w.rt.rows.duePolls(['b1'], Date.now(), 10), 1, false);
    expect(r.updated).toBe(1);
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'cancelled', refunded: true, error: 'INVALID PLAYER' });
  });

  it('one foreign order with an unknown status in /history does not blind the poller to the others (before: the whole list was unreadable)', async () => {
    const w = await world([pubgRow(0), pubgRow(1)]);
    processing(w.rt, 0, 'ORD-A');
    processing(w.rt, 1, 'ORD-B');
    w.set(() => ({
      body: {
        success: true, count: '4', orders: [
          { orderId: 'MANUAL-1', status: 'Manual Review', amountUsd: '50' },
          'garbage',
          { orderId: 'ORD-A', status: 'SUCCESS', amountUsd: '0.92' },
          { id: 'ORD-B', status: 'failed', refunded: 1 },
        ],
      },
    }));
    const r = await new Poller(w.rt, w.rt.account).round(w.rt.rows.duePolls(['b1'], Date.now(), 10), 2, false);
    expect(r.updated).toBe(2);
    expect(w.rt.rows.get('b1', 0)!.state).toBe('completed');
    expect(w.rt.rows.get('b1', 1)).toMatchObject({ state: 'cancelled', refunded: true });
  });

  it('an unknown status word is never an end: the row stays processing on its doubt clock, then review', async () => {
    const w = await world([pubgRow(0)], { TOPUP_REVIEW_AFTER_MS: '60000' });
    processing(w.rt, 0, 'ORD-H');
    w.set(() => ({ body: { orderId: 'ORD-H', status: 'On Hold' } }));
    const poller = new Poller(w.rt, w.rt.account);
    await poller.round(w.rt.rows.duePolls(['b1'], Date.now(), 10), 1, false);
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'unseen' });
    expect(w.rt.rows.get('b1', 0)!.doubtSince).not.toBeNull();
    w.rt.db.prepare(`UPDATE rows SET doubt_since = ?, next_poll_at = 0`).run(Date.now() - 61_000);
    await poller.round(w.rt.rows.duePolls(['b1'], Date.now(), 10), 1, false);
    const row = w.rt.rows.get('b1', 0)!;
    expect(row.state).toBe('review');
    expect(row.error).toMatch(/status "On Hold", which is not one this tool knows/);
    expect(row.lastAnswer).toContain('On Hold');
  });

  it('codes as one string and as [{code, pin}] are kept (before: lost)', async () => {
    const w = await world([keyRow(0), keyRow(1)]);
    w.set((_req, body) => {
      const trxid = (JSON.parse(body) as { trxid: string }).trxid;
      return trxid === 'tu-key-0'
        ? { body: { orderCreated: true, orderId: 'K0', status: 'completed', codes: 'AAAA-1111, BBBB-2222' } }
        : { body: { orderCreated: true, orderId: 'K1', status: 'completed', codes: [{ code: 'CCCC-3333', pin: '1234' }, { code: 'DDDD-4444', pin: null }] } };
    });
    const d = deps(w.rt);
    await sendRow(d, w.rt.rows.get('b1', 0)!);
    await sendRow(d, w.rt.rows.get('b1', 1)!);
    expect(w.rt.rows.get('b1', 0)!.codes).toEqual(['AAAA-1111', 'BBBB-2222']);
    expect(w.rt.rows.get('b1', 1)!.codes).toEqual(['CCCC-3333/PIN:1234', 'DDDD-4444']);
  });

  it('a completed key order without codes is read again, then completed as CODES MISSING (before: final with an empty cell)', async () => {
    const w = await world([keyRow(0)]);
    w.set(() => ({ body: { orderCreated: true, orderId: 'K9', status: 'completed' } }));
    await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!);
    expect(w.rt.rows.get('b1', 0)!.state).toBe('processing');
    const poller = new Poller(w.rt, w.rt.account);
    for (let i = 0; i < 10 && w.rt.rows.get('b1', 0)!.state === 'processing'; i++) {
      w.rt.db.prepare('UPDATE rows SET next_poll_at = 0').run();
      await poller.round(w.rt.rows.duePolls(['b1'], Date.now(), 10), 1, false);
    }
    const row = w.rt.rows.get('b1', 0)!;
    expect(row.state).toBe('completed');
    expect(row.codeReads).toBe(5);
    expect(row.note).toMatch(/^CODES MISSING/);
  });

  it('codes that arrive on a later read are taken', async () => {
    const w = await world([keyRow(0)]);
    let reads = 0;
    w.set((req) => (req.method === 'POST' ? { body: { orderCreated: true, orderId: 'K5', status: 'completed' } } : { body: { orderId: 'K5', status: 'completed', codes: ++reads >= 2 ? ['EEEE-5555', 'FFFF-6666'] : [] } }));
    await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!);
    const poller = new Poller(w.rt, w.rt.account);
    for (let i = 0; i < 3; i++) {
      w.rt.db.prepare('UPDATE rows SET next_poll_at = 0').run();
      await poller.round(w.rt.rows.duePolls(['b1'], Date.now(), 10), 1, false);
    }
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'completed', codes: ['EEEE-5555', 'FFFF-6666'], note: expect.stringContaining('without codes') });
  });

  it('"balanceUsd": "12.50" without a currency funds batches (before: funding and the account probe stopped)', async () => {
    const w = await world([pubgRow(0)]);
    w.set(() => ({ body: { success: true, balanceUsd: '12.50' } }));
    const verdict = await checkFunds(w.rt, new Set(['b1']));
    expect(verdict).toMatchObject({ balanceUsd: 12.5 });
    expect(verdict.funded.map((b) => b.id)).toEqual(['b1']);
  });

  it('503 {"error": "Maintenance"} (mixed case, no code) pauses sending like maintenance; nothing is charged twice', async () => {
    const w = await world([pubgRow(0)]);
    w.set(() => ({ status: 503, body: { error: 'Maintenance' } }));
    const d = deps(w.rt);
    expect(await sendRow(d, w.rt.rows.get('b1', 0)!)).toBe('paused-maintenance');
    expect(d.events).toContain('pause:maintenance:MAINTENANCE');
    expect(w.rt.rows.get('b1', 0)!.state).toBe('pending');
  });

  it('a Retry-After of a day holds calls for at most TOPUP_RETRY_AFTER_MAX_MS (before: frozen for a day, across restarts)', async () => {
    const w = await world([pubgRow(0)], { TOPUP_RETRY_AFTER_MAX_MS: '2000' });
    w.set(() => ({ status: 429, body: { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' }, headers: { 'retry-after': '86400' } }));
    await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!);
    const held = w.rt.account.scheduler.holdRemainingMs();
    expect(held).toBeGreaterThan(1_000);
    expect(held).toBeLessThanOrEqual(2_000 + w.rt.config.rateMarginMs);
    expect(w.rt.rows.get('b1', 0)!.nextTryAt - Date.now()).toBeLessThanOrEqual(2_000);
  });
});

describe('never mistaken on money', () => {
  it('a 400 that carries orderCreated: true and an orderId is recorded as charged (before: read as "not charged", and retry bought it again)', async () => {
    const w = await world([pubgRow(0)]);
    w.set(() => ({ status: 400, body: { success: false, error: 'PROCESSING ERROR', orderCreated: true, orderId: 'ORD-400', status: 'processing' } }));
    expect(await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('placed');
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', orderId: 'ORD-400' });
  });

  it('a 400 saying the trxid was already used goes to the history check, never "rejected" (before: rejected, and retry bought it again)', async () => {
    const w = await world([pubgRow(0)]);
    w.set(() => ({ status: 400, body: { success: false, error: 'Trxid already used' } }));
    expect(await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('verify');
    expect(w.rt.rows.get('b1', 0)!.state).toBe('searching');
    // History holds no order with that trxid: still not "nothing charged".
    w.set(() => ({ body: { success: true, count: 0, orders: [] } }));
    expect(await verifyRow(w.rt, w.rt.rows.get('b1', 0)!)).toBe('review');
  });

  it('a replay of someone else\'s order under a reused trxid is never taken as the row\'s order (before: completed with another customer\'s codes)', async () => {
    const w = await world([{ ...pubgRow(0), request: { pid: 'PUBG-60', trxid: 'SHOP-1001', userId: '5123456789' }, cells: ['PUBG-60', '5123456789', 'SHOP-1001'] }]);
    w.set(() => ({
      body: {
        orderCreated: true, orderId: 'OLD-STEAM-9', status: 'completed', game: 'steamwallet', packName: 'Steam 10 USD', amountUsd: 10.5,
        codes: ['STEAM-SECRET-CODE'], idempotentReplay: true,
      },
    }));
    expect(await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('review');
    const row = w.rt.rows.get('b1', 0)!;
    expect(row).toMatchObject({ state: 'review', orderId: null, codes: [], amountUsd: null });
    expect(row.error).toMatch(/not this row's purchase \(game: sent "pubg", the order has "steamwallet"; packName: sent "60 UC", the order has "Steam 10 USD"\)/);
    expect(row.lastAnswer).not.toContain('STEAM-SECRET-CODE');
  });

  it('a replay on the first send that names every field of the row is taken and noted; one that leaves the pack out goes to review', async () => {
    const w = await world([pubgRow(0)]);
    w.set(() => ({ body: { orderCreated: true, orderId: 'ORD-R', status: 'completed', game: 'pubg', packName: '60 UC', userId: '5123456789', idempotentReplay: 'true' } }));
    expect(await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('placed');
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'completed', orderId: 'ORD-R', note: expect.stringContaining('replay') });

    const sparse = await world([pubgRow(0)]);
    sparse.set(() => ({ body: { orderCreated: true, orderId: 'ORD-R', status: 'completed', game: 'pubg', userId: '5123456789', idempotentReplay: 'true' } }));
    expect(await sendRow(deps(sparse.rt), sparse.rt.rows.get('b1', 0)!)).toBe('review');
    expect(sparse.rt.rows.get('b1', 0)).toMatchObject({ state: 'review', orderId: null, error: expect.stringMatching(/does not name this row's pack/) });
  });

  it('403 FORBIDDEN after a lost answer goes to the history check like a 400 (before: "rejected", nothing charged)', async () => {
    const w = await world([pubgRow(0)]);
    let posts = 0;
    w.set((req) => {
      if (req.method === 'POST' && ++posts === 1) return { status: 502, body: '<html><body>502 Bad Gateway</body></html>', headers: { 'content-type': 'text/html' } };
      if (req.method === 'POST') return { status: 403, body: { success: false, code: 'FORBIDDEN', error: 'FORBIDDEN' } };
      return { body: { success: true, count: 1, orders: [{ orderId: 'ORD-F', status: 'processing', trxid: 'tu-row-0', game: 'pubg', packName: '60 UC', userId: '5123456789' }] } };
    });
    const d = deps(w.rt);
    expect(await sendRow(d, w.rt.rows.get('b1', 0)!)).toBe('retry');
    w.rt.db.prepare('UPDATE rows SET next_try_at = 0').run();
    expect(await sendRow(d, w.rt.rows.get('b1', 0)!)).toBe('verify');
    expect(await verifyRow(w.rt, w.rt.rows.get('b1', 0)!)).toBe('placed');
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', orderId: 'ORD-F' });
  });

  it('the history check never takes an order that a twin row still on its first send could own (before: claimed it)', async () => {
    const w = await world([pubgRow(0), { ...pubgRow(1), request: { pid: 'PUBG-60', trxid: 'tu-row-1', userId: '5123456789' } }]);
    // Row 0: refused after a lost answer. Row 1: the same purchase, on its first send right now.
    w.rt.db.prepare(`UPDATE rows SET state = 'verifying', attempts = 2, first_sent_at = ?, error = 'INVALID PACK', reject_code = 'INVALID_PACK' WHERE idx = 0`).run(Date.now() - 5_000);
    w.rt.db.prepare(`UPDATE rows SET state = 'sending', attempts = 1, first_sent_at = ? WHERE idx = 1`).run(Date.now());
    w.set(() => ({ body: { success: true, count: 1, orders: [{ orderId: 'ORD-T', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789' }] } }));
    expect(await verifyRow(w.rt, w.rt.rows.get('b1', 0)!)).toBe('review');
    expect(w.rt.rows.get('b1', 0)!.orderId).toBeNull();
  });

  it('an HTML 502 from a proxy on POST /orders leaves the row in doubt: resent with the same trxid, never refused', async () => {
    const w = await world([pubgRow(0)]);
    w.set(() => ({ status: 502, body: '<!DOCTYPE html><title>502 Bad Gateway</title><h1>cloudflare</h1>', headers: { 'content-type': 'text/html' } }));
    expect(await sendRow(deps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('retry');
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'resending' });
    expect(w.rt.rows.get('b1', 0)!.lastAnswer).toContain('502 Bad Gateway');
  });

  it('an HTML 403 from a WAF on a poll pauses the account; the row is not blamed', async () => {
    const w = await world([pubgRow(0)]);
    processing(w.rt, 0, 'ORD-W');
    w.set(() => ({ status: 403, body: '<html>Access denied</html>', headers: { 'content-type': 'text/html' } }));
    await expect(new Poller(w.rt, w.rt.account).round(w.rt.rows.duePolls(['b1'], Date.now(), 10), 1, false)).rejects.toMatchObject({ classification: 'account' });
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', doubtSince: null });
  });
});
