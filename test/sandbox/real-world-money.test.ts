/**
 * The real-world style's behaviours that are more than presentation, over HTTP, each checked
 * against the admin ledger: cancels without refund, failure at submit, HTML 502 pages (before
 * and after an order was made), the manual order, and that presentation changes no money.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { admin, exactIds, get, isFalse, isTrue, KEY, manualClock, order, raw, start, startRealWorld, stateOf, trx } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'sandbox-rw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Sb = Awaited<ReturnType<typeof start>>;
const apiOrders = (sb: Sb) => sb.admin.ledger().orders.filter((o) => o.source === 'api');
const entriesOf = (sb: Sb, orderId: string) => sb.admin.ledger().entries.filter((e) => e.orderId === orderId).map((e) => `${e.kind} ${e.amountUsd} @${e.time}`);
const balance = (sb: Sb) => Object.values(sb.admin.ledger().balances)[0] as number;

describe('real-world: cancels without refund', () => {
  it('a failing top-up cancelled after processing keeps the charge: no refund entry, refunded false or absent, balance stays down', async () => {
    const clock = manualClock();
    const sb = await startRealWorld({ now: clock.now, fulfilment: { processingMs: [1000, 1000] }, realWorld: { instantFailShare: 0, unrefundedShare: 1 } });
    const before = balance(sb);
    const r = await raw(sb, 'POST', '/orders', { pid: 'PUBG-660', trxid: trx(), userId: '99999' });
    expect(stateOf(r.json.status)).toBe('processing');
    const o = apiOrders(sb)[0]!;
    clock.advance(1000);
    const done = (await raw(sb, 'GET', `/orders/${exactIds(r.text)[0]}`)).json;
    expect(stateOf(done.status)).toBe('cancelled');
    expect(done.status).not.toBe('Refunded');
    expect(done.error).toBe('INVALID PLAYER');
    expect(!('refunded' in done) || isFalse(done.refunded)).toBe(true);
    expect(entriesOf(sb, String(o.orderId))).toEqual([`charge -9.1 @${Date.parse(String(o.createdAt))}`]);
    expect(apiOrders(sb)[0]).toMatchObject({ status: 'cancelled', refunded: false });
    expect(balance(sb)).toBeCloseTo(before - 9.1, 6);
    expect((await raw(sb, 'GET', '/balance')).json.balanceUsd).toBe((before - 9.1).toFixed(2));
  });

  it('a seeded share: some failures refunded, some not; the ledger holds a refund exactly for the refunded ones and the balance adds up', async () => {
    const clock = manualClock();
    const sb = await startRealWorld({ now: clock.now, fulfilment: { processingMs: [500, 500] }, realWorld: { unrefundedShare: 0.5 } });
    const before = balance(sb);
    const said = new Map<string, unknown>();
    for (let i = 0; i < 40; i++) await order(sb, { pid: 'PUBG-60', trxid: `U-${i}`, userId: 'fail-player' });
    clock.advance(500);
    const h = await raw(sb, 'GET', '/history?limit=100');
    const ids = exactIds(h.text);
    (h.json.orders as any[]).forEach((o, i) => said.set(ids[i] as string, 'refunded' in o ? o.refunded : 'absent'));
    const orders = apiOrders(sb);
    const refunds = new Set(sb.admin.ledger().entries.filter((e) => e.kind === 'refund').map((e) => e.orderId));
    const kept = orders.filter((o) => !o.refunded);
    expect(kept.length).toBeGreaterThan(5);
    expect(kept.length).toBeLessThan(35);
    for (const o of orders) {
      expect(o.status).toBe('cancelled');
      expect(refunds.has(String(o.orderId))).toBe(o.refunded === true);
      const word = said.get(o.publicId);
      if (o.refunded) expect(isTrue(word)).toBe(true);
      else expect(word === 'absent' || isFalse(word)).toBe(true);
    }
    expect(new Set(kept.map((o) => said.get(o.publicId) === 'absent'))).toEqual(new Set([true, false]));
    expect(balance(sb)).toBeCloseTo(before - kept.length * 0.92, 6);
    // Same seed, same fates: a rerun decides the same orders.
    const again = await startRealWorld({ now: clock.now, fulfilment: { processingMs: [0, 0] }, realWorld: { unrefundedShare: 0.5 } });
    for (let i = 0; i < 40; i++) await order(again, { pid: 'PUBG-60', trxid: `U-${i}`, userId: 'fail-player' });
    expect(apiOrders(again).map((o) => o.refunded)).toEqual(orders.map((o) => o.refunded));
  });
});

describe('real-world: failure at submit', () => {
  it('200, orderCreated true, a cancelled word, INVALID PLAYER, refunded: charge and refund in the ledger at once', async () => {
    const sb = await startRealWorld({ realWorld: { instantFailShare: 1, unrefundedShare: 0 } });
    const before = balance(sb);
    const t = trx();
    const r = await raw(sb, 'POST', '/orders', { pid: 'PUBG-325', trxid: t, userId: '99999' });
    expect(r.status).toBe(200);
    expect(isTrue(r.json.orderCreated)).toBe(true);
    expect(stateOf(r.json.status)).toBe('cancelled');
    expect(r.json).toMatchObject({ error: 'INVALID PLAYER', amountUsd: '4.55' });
    expect(isTrue(r.json.refunded)).toBe(true);
    const o = apiOrders(sb)[0]!;
    const at = Date.parse(String(o.createdAt));
    expect(entriesOf(sb, String(o.orderId))).toEqual([`charge -4.55 @${at}`, `refund 4.55 @${at}`]);
    expect(balance(sb)).toBeCloseTo(before, 6);
    const replay = await raw(sb, 'POST', '/orders', { pid: 'PUBG-325', trxid: t, userId: '99999' });
    expect(isTrue(replay.json.idempotentReplay)).toBe(true);
    expect(exactIds(replay.text)).toEqual(exactIds(r.text));
    expect(sb.admin.ledger().entries.filter((e) => e.trxid === t)).toHaveLength(2);
  });

  it('without refund: the charge stays, refunded false or absent', async () => {
    const sb = await startRealWorld({ realWorld: { instantFailShare: 1, unrefundedShare: 1 } });
    const before = balance(sb);
    const r = await raw(sb, 'POST', '/orders', { pid: 'FFMENA-100', trxid: trx(), userId: '99999' });
    expect(stateOf(r.json.status)).toBe('cancelled');
    expect(!('refunded' in r.json) || isFalse(r.json.refunded)).toBe(true);
    const o = apiOrders(sb)[0]!;
    expect(entriesOf(sb, String(o.orderId))).toEqual([`charge -0.95 @${Date.parse(String(o.createdAt))}`]);
    expect(balance(sb)).toBeCloseTo(before - 0.95, 6);
  });

  it('only failing players fail; keys and good players never do', async () => {
    const sb = await startRealWorld({ realWorld: { instantFailShare: 1, unrefundedShare: 1 } });
    expect(stateOf((await raw(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: trx(), userId: '5123456' })).json.status)).toBe('completed');
    expect(stateOf((await raw(sb, 'POST', '/orders', { pid: 'STEAM-5', trxid: trx(), quantity: 1 })).json.status)).toBe('completed');
  });
});

describe('real-world: HTML 502 pages from a proxy', () => {
  it('a GET answered 502 text/html (not JSON), logged as 502, nothing changed', async () => {
    const sb = await startRealWorld({ realWorld: { htmlShare: 1 } });
    const r = await raw(sb, 'GET', '/balance');
    expect(r.status).toBe(502);
    expect(r.type).toMatch(/^text\/html/);
    expect(r.text).toMatch(/^<(!DOCTYPE )?html/i);
    expect(r.text).toMatch(/502/);
    expect(r.json).toBeUndefined();
    expect(sb.admin.calls().at(-1)).toMatchObject({ route: 'GET /balance', status: 502, admitted: true });
  });

  it('POST /orders: some pages come before the order, some after it was made and charged; a resubmit finds the charged ones', async () => {
    const sb = await startRealWorld({ realWorld: { htmlShare: 1 } });
    const trxids = Array.from({ length: 40 }, (_, i) => `H-${process.pid}-${i}`);
    for (const t of trxids) expect((await raw(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: t, userId: '5123456' })).status).toBe(502);
    const charged = new Set(apiOrders(sb).map((o) => o.trxid));
    expect(charged.size).toBeGreaterThan(5);
    expect(charged.size).toBeLessThan(35);
    await admin(sb, 'POST', 'answers', { htmlShare: 0 });
    for (const t of trxids) {
      const r = await raw(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: t, userId: '5123456' });
      expect(r.status).toBe(200);
      expect(isTrue(r.json.idempotentReplay), t).toBe(charged.has(t));
    }
    const charges = sb.admin.ledger().entries.filter((e) => e.kind === 'charge' && e.trxid !== null);
    expect(charges.map((e) => e.trxid).sort()).toEqual([...trxids].sort()); // one charge per purchase
  });

  it('the share is drawn per call from the seed: about htmlShare of the calls, none at 0, the same calls for the same seed', async () => {
    const pattern = async (share: number, seed: number) => {
      const sb = await startRealWorld({ realWorld: { htmlShare: share, seed } });
      const out: number[] = [];
      for (let i = 0; i < 300; i++) out.push((await raw(sb, 'GET', '/my-ip')).status);
      return out.map((s) => (s === 502 ? 'x' : '.')).join('');
    };
    const a = await pattern(0.1, 5);
    const hits = a.split('x').length - 1;
    expect(hits).toBeGreaterThan(10);
    expect(hits).toBeLessThan(60);
    expect(await pattern(0.1, 5)).toBe(a);
    expect(await pattern(0.1, 6)).not.toBe(a);
    expect(await pattern(0, 5)).not.toContain('x');
  });

  it('spec style never sends one, whatever htmlShare says', async () => {
    const sb = await start({ realWorld: { htmlShare: 1 } });
    expect((await get(sb, '/balance')).status).toBe(200);
  });
});

describe('real-world: the manual order', () => {
  it('one order placed outside the API: charged in the ledger without trxid, unknown status in history, never settles', async () => {
    const clock = manualClock();
    const sb = await startRealWorld({ now: clock.now });
    const ledger = sb.admin.ledger();
    expect(ledger.orders).toHaveLength(1);
    const m = ledger.orders[0]!;
    expect(m).toMatchObject({ source: 'manual', status: 'processing', amountUsd: 0.92 });
    expect(m).not.toHaveProperty('trxid');
    expect(ledger.entries).toEqual([{ time: clock.t, account: m.account, kind: 'charge', orderId: m.orderId, trxid: null, amountUsd: -0.92 }]);
    expect(balance(sb)).toBeCloseTo(1000 - 0.92, 6);
    clock.advance(86_400_000);
    const h = await raw(sb, 'GET', '/history');
    expect(h.json.orders).toHaveLength(1);
    const o = h.json.orders[0];
    expect(['Manual Review', 'On Hold']).toContain(o.status);
    expect(stateOf(o.status)).toBeUndefined();
    expect(o).not.toHaveProperty('trxid');
    expect(exactIds(h.text)).toEqual([m.publicId]);
    // The spec style shows it as the spec says a pending order is shown.
    await admin(sb, 'POST', 'answers', { style: 'spec' });
    expect((await get(sb, '/history')).body.orders[0]).toMatchObject({ status: 'processing', orderId: m.orderId });
    expect((await get(sb, '/history')).body.orders[0]).not.toHaveProperty('trxid');
  });

  it('placed once per account: at the switch, for accounts created while on, not again after a restart; none for an account that cannot pay', async () => {
    const stateFile = join(dir, 'manual.sqlite');
    const a = await startSandbox({ apiKey: KEY, stateFile, accounts: [{ apiKey: 'poor-key-0001', balanceUsd: 0.5 }] });
    expect(a.admin.ledger().orders).toHaveLength(0);
    await admin(a, 'POST', 'answers', { style: 'real-world' });
    await admin(a, 'POST', 'answers', { style: 'real-world', htmlShare: 0 });
    expect(a.admin.ledger().orders.map((o) => o.source)).toEqual(['manual']);
    await admin(a, 'POST', 'account', { apiKey: 'late-key-0001' });
    await admin(a, 'POST', 'topup', { apiKey: 'late-key-0001', amountUsd: 10 });
    await admin(a, 'POST', 'account', { apiKey: 'late-key-0001' });
    expect(a.admin.ledger().orders.filter((o) => o.source === 'manual')).toHaveLength(2);
    await a.close();
    const b = await startSandbox({ apiKey: KEY, stateFile, answers: 'real-world' });
    try {
      expect(b.admin.ledger().orders.filter((o) => o.source === 'manual')).toHaveLength(2);
      expect((await get(b, '/balance', 'poor-key-0001')).body.balanceUsd).toBe('0.50');
    } finally {
      await b.close();
    }
  });
});

describe('real-world: presentation moves no money', () => {
  it('the same orders in both styles (no fates, no pages) leave the same ledger, apart from the manual order', async () => {
    const clock = manualClock();
    const fulfilment = { processingShare: 0.5, failShare: 0.3, processingMs: [100, 900] as [number, number], seed: 3 };
    const run = async (sb: Sb) => {
      for (let i = 0; i < 20; i++) await order(sb, { pid: i % 3 ? 'PUBG-325' : 'KEY-PUBG-60', trxid: `S-${i}`, ...(i % 3 ? { userId: `51234${i}` } : { quantity: 2 }) });
      clock.advance(1000);
      await get(sb, '/balance');
      const l = sb.admin.ledger();
      const manual = new Set(l.orders.filter((o) => o.source === 'manual').map((o) => o.orderId));
      return { entries: l.entries.filter((e) => !manual.has(e.orderId ?? '')).map((e) => `${e.kind} ${e.trxid} ${e.amountUsd} ${e.time}`), balance: balance(sb) };
    };
    const spec = await run(await start({ now: clock.now, fulfilment }));
    clock.set(0);
    const rw = await run(await startRealWorld({ now: clock.now, fulfilment, realWorld: { instantFailShare: 0, unrefundedShare: 0 } }));
    expect(rw.entries).toEqual(spec.entries);
    expect(spec.entries.some((e) => e.startsWith('refund'))).toBe(true);
    expect(rw.balance).toBeCloseTo(spec.balance - 0.92, 6);
  });
});

describe('state files from before the answer styles', () => {
  it('an orders table without refund_on_cancel/source gets them on open, with refunds as before', async () => {
    const stateFile = join(dir, 'old.sqlite');
    const clock = manualClock();
    const a = await startSandbox({ apiKey: KEY, stateFile, now: clock.now, fulfilment: { processingShare: 1, failShare: 0, processingMs: [1000, 1000] } });
    const p = await order(a, { pid: 'PUBG-60', trxid: trx(), userId: 'fail-me' });
    await a.close();
    const db = new Database(stateFile);
    db.exec('ALTER TABLE orders DROP COLUMN refund_on_cancel; ALTER TABLE orders DROP COLUMN source;');
    db.close();
    clock.advance(1000);
    const b = await startSandbox({ apiKey: KEY, stateFile, now: clock.now });
    try {
      expect((await get(b, `/orders/${p.body.orderId}`)).body).toMatchObject({ status: 'cancelled', refunded: true, trxid: p.body.trxid });
      expect(b.admin.ledger().orders[0]).toMatchObject({ source: 'api' });
    } finally {
      await b.close();
    }
  });
});
