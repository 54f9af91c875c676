/**
 * Adversarial review of issue 20's fixes (wt-adv). Each test states the money-safe outcome; a
 * failing test is a finding. Real SQLite store, real client, sender and history check; the
 * supplier is scripted (scripted-supplier.ts) because the answers must be exact.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendRow } from '../../src/dispatch/sender.js';
import { verifyRow } from '../../src/poll/verify.js';
import type { Runtime } from '../../src/runtime.js';
import type { NewRow } from '../../src/store/rows.js';
import { scriptedWorld, senderDeps, type Answer } from '../unit/scripted-supplier.js';

const savedTz = process.env.TZ;
afterEach(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

/** "2026-11-26 03:04:05": a MySQL DATETIME in UTC, written without a zone (how many PHP backends answer). */
const naiveUtc = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

const topUp = (trxid = 'tu-topup'): NewRow => ({
  idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid, userId: '5123456789' }, error: null,
  productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92,
});
const keyRow = (trxid: string, quantity = 1): NewRow => ({
  idx: 0, line: 2, cells: ['STEAM-5', String(quantity), trxid], request: { pid: 'STEAM-5', trxid, quantity }, error: null,
  productId: 'STEAM-5', slug: 'steam', packName: 'Steam 5 USD', quantity, unitPriceUsd: 5.1, expectedUsd: 5.1 * quantity,
});

describe('A1 (money): a zone-less createdAt read in the host\'s zone makes our own charged order "earlier"', () => {
  beforeEach(() => {
    // A reseller in Jakarta (UTC+7) runs the daemon; the supplier writes UTC DATETIMEs without a zone.
    process.env.TZ = 'Asia/Jakarta';
  });

  it('first answer lost (502 HTML, order made), resend refused INSUFFICIENT STOCK, history (no trxids) shows the order: never `rejected`', async () => {
    const w = await scriptedWorld([topUp()]);
    const deps = senderDeps(w.rt);
    let post = 0;
    let madeAt = 0;
    w.set((req): Answer => {
      if (req.method === 'POST') {
        if (++post === 1) {
          madeAt = Date.now(); // the supplier made the order, then its proxy lost the answer
          return { status: 502, body: '<html><body>502 Bad Gateway</body></html>' };
        }
        return { status: 400, body: { orderCreated: false, status: 'cancelled', game: 'pubg', error: 'INSUFFICIENT STOCK' } };
      }
      if (req.url?.startsWith('/history')) {
        return { body: { success: true, count: 1, orders: [{ orderId: 'ORD-OURS', status: 'completed', game: 'pubg', packName: '60 UC', userId: '5123456789', amountUsd: 0.92, createdAt: naiveUtc(madeAt) }] } };
      }
      return { status: 404, body: { success: false, error: 'not scripted' } };
    });
    expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('retry');
    w.sql(0, 'next_try_at = 0');
    expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('verify');
    const outcome = await verifyRow(w.rt, w.rt.rows.get('b1', 0)!);
    const row = w.rt.rows.get('b1', 0)!;
    // The account WAS charged for ORD-OURS. Reading it as "not placed" tells the reseller to buy again.
    expect({ outcome, state: row.state }).not.toEqual({ outcome: 'not-placed', state: 'rejected' });
    expect(row.state === 'completed' || row.state === 'review').toBe(true);
  });

  it('the same with ISO-Z times when the host clock is 11 minutes ahead of the supplier\'s (no NTP on the reseller\'s box)', async () => {
    delete process.env.TZ;
    const w = await scriptedWorld([topUp()]);
    const deps = senderDeps(w.rt);
    let post = 0;
    let madeAt = 0;
    w.set((req): Answer => {
      if (req.method === 'POST') {
        if (++post === 1) {
          madeAt = Date.now() - 11 * 60_000; // supplier's clock
          return { status: 502, body: '<html><body>502 Bad Gateway</body></html>' };
        }
        return { status: 400, body: { orderCreated: false, status: 'cancelled', game: 'pubg', error: 'INSUFFICIENT STOCK' } };
      }
      if (req.url?.startsWith('/history')) {
        return { body: { success: true, count: 1, orders: [{ orderId: 'ORD-OURS', status: 'completed', game: 'pubg', packName: '60 UC', userId: '5123456789', createdAt: new Date(madeAt).toISOString() }] } };
      }
      return { status: 404, body: { success: false, error: 'not scripted' } };
    });
    await sendRow(deps, w.rt.rows.get('b1', 0)!);
    w.sql(0, 'next_try_at = 0');
    await sendRow(deps, w.rt.rows.get('b1', 0)!);
    await verifyRow(w.rt, w.rt.rows.get('b1', 0)!);
    expect(w.rt.rows.get('b1', 0)!.state).not.toBe('rejected');
  });

  it('a fresh key/card order (first send, 200, codes) is completed, not sent to review as "existed before this row was first sent"', async () => {
    const w = await scriptedWorld([keyRow('tu-card-1')]);
    w.set(() => ({ body: { orderCreated: true, orderId: 'ORD-NEW', status: 'completed', game: 'steam', packName: 'Steam 5 USD', amountUsd: 5.1, codes: ['NEW-CODE'], createdAt: naiveUtc(Date.now()) } }));
    const out = await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!);
    const row = w.rt.rows.get('b1', 0)!;
    // Bought and paid: the review text says "Nothing may have been bought ... ordering this row again with a new trxid".
    expect({ out, state: row.state, error: row.error }).toMatchObject({ out: 'placed', state: 'completed' });
  });

  it('a fresh top-up order whose answer does not echo the player (spec: empty fields may be omitted) is completed', async () => {
    const w = await scriptedWorld([topUp()]);
    w.set(() => ({ body: { orderCreated: true, orderId: 'ORD-NEW', status: 'processing', game: 'pubg', packName: '60 UC', createdAt: naiveUtc(Date.now()) } }));
    const out = await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!);
    expect({ out, state: w.rt.rows.get('b1', 0)!.state }).toEqual({ out: 'placed', state: 'processing' });
  });
});

describe('A1b (money, older than issue 20): reachesBack reads the same zone-less times', () => {
  it('a full page of history (200 orders, the oldest an hour old) does not reach back to a first send 3 h ago: never `rejected`', async () => {
    process.env.TZ = 'Asia/Jakarta';
    const w = await scriptedWorld([topUp()]);
    const first = Date.now() - 3 * 3_600_000;
    w.sql(0, `state = 'verifying', attempts = 2, first_sent_at = ?, last_sent_at = ?, error = 'INSUFFICIENT STOCK'`, first, first + 5_000);
    // 200 other players' orders from the last hour; our order (3 h old) is on a later page.
    const page = Array.from({ length: 200 }, (_, i) => ({ orderId: `ORD-x${i}`, status: 'completed', game: 'pubg', packName: '60 UC', userId: `77${i}`, createdAt: naiveUtc(Date.now() - i * 18_000) }));
    w.set(() => ({ body: { success: true, count: 200, orders: page } }));
    await verifyRow(w.rt, w.rt.rows.get('b1', 0)!);
    expect(w.rt.rows.get('b1', 0)!.state).not.toBe('rejected');
  });
});

describe('A2 (money): defect 2 is still reachable when the first send got no definite answer (real-world answers carry no createdAt)', () => {
  // Yesterday's order for SHOP-1001, as the real-world supplier answers a replay: no createdAt, no trxid, no quantity.
  const yesterdayReplay = { status: 'Success', data: { id: 'ORD-OLD', status: 'Success', game: 'steam', packName: 'Steam 5 USD', amountUsd: '5.10', codes: 'OLD-CODE-1', idempotentReplay: 'true' } };

  it('a stop during the Retry-After hold (the request never left) makes the row `resending`; the next send\'s replay of yesterday\'s order completes it with yesterday\'s code', async () => {
    const w = await scriptedWorld([keyRow('SHOP-1001', 3)]);
    const stop = new AbortController();
    w.set(() => ({ body: yesterdayReplay }));
    const held = { ...w.rt.account, client: holdingClient(w.rt, () => stop.abort(new Error('SIGTERM'))) };
    const out1 = await sendRow({ ...senderDeps(w.rt), rt: { ...w.rt, account: held, accountOf: () => held } as Runtime }, w.rt.rows.get('b1', 0)!, stop.signal);
    expect(out1).toBe('not-sent');
    expect(w.seen.filter((s) => s.startsWith('POST'))).toEqual([]); // nothing left this home
    // The request never left: the row is as it was (a first send stays a first send).
    expect(w.rt.rows.get('b1', 0)!.state).toBe('pending');
    // The next process sends the trxid for the first time as far as the supplier is concerned.
    w.sql(0, 'next_try_at = 0');
    await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!);
    const row = w.rt.rows.get('b1', 0)!;
    // Invariant (issue 20): a replay on the row's first send never gives a key/card row codes silently.
    expect({ state: row.state, codes: row.codes, orderId: row.orderId }).toMatchObject({ state: 'review', codes: [], orderId: null });
  });

  it('the first send is cut by a proxy (502 HTML, nothing made); the resend is answered with yesterday\'s order (1 code for quantity 3): not completed silently', async () => {
    const w = await scriptedWorld([keyRow('SHOP-1001', 3)]);
    let post = 0;
    w.set(() => (++post === 1 ? { status: 502, body: '<html>502 Bad Gateway</html>' } : { body: yesterdayReplay }));
    const deps = senderDeps(w.rt);
    expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('retry');
    w.sql(0, 'next_try_at = 0');
    await sendRow(deps, w.rt.rows.get('b1', 0)!);
    const row = w.rt.rows.get('b1', 0)!;
    expect({ state: row.state, codes: row.codes }).toMatchObject({ state: 'review', codes: [] });
  });
});

describe('A3 (money, found by the simulator, seed 7): a replay made minutes before the first send, while no Date header measured the clocks', () => {
  // Every answer without a Date header: the engine has no measure of the supplier's clock.
  it('the first send meets maintenance (503); the resend is answered with a card order made 3 minutes earlier for 2 keys under the shop\'s trxid: review, never completed', async () => {
    const w = await scriptedWorld([keyRow('OLD-3', 1)]);
    let post = 0;
    const madeAt = Date.now() - 3 * 60_000;
    const replay = { orderId: 'M100002', status: 'completed', game: 'steam', packName: 'Steam 5 USD', amountUsd: 5.1, codes: ['CARD-A', 'CARD-B'], idempotentReplay: true, createdAt: new Date(madeAt).toISOString() };
    w.set(() => (++post === 1 ? { status: 503, body: { success: false, error: 'MAINTENANCE' }, date: false } : { body: replay, date: false }));
    const deps = senderDeps(w.rt);
    await sendRow(deps, w.rt.rows.get('b1', 0)!);
    w.sql(0, 'next_try_at = 0');
    await sendRow(deps, w.rt.rows.get('b1', 0)!);
    const row = w.rt.rows.get('b1', 0)!;
    expect(post).toBe(2);
    expect({ state: row.state, codes: row.codes, orderId: row.orderId }).toMatchObject({ state: 'review', codes: [], orderId: null });
  });

  it('a top-up row under a shop\'s trxid whose resend is answered with a replay naming every field, made 3 minutes earlier: completed, with a note saying it may be an earlier purchase', async () => {
    const w = await scriptedWorld([topUp('SHOP-77')]);
    let post = 0;
    const replay = { orderId: 'M7', status: 'completed', pid: 'PUBG-60', userId: '5123456789', amountUsd: 0.92, idempotentReplay: true, createdAt: new Date(Date.now() - 3 * 60_000).toISOString() };
    w.set(() => (++post === 1 ? { status: 502, body: '<html>502 Bad Gateway</html>', date: false } : { body: replay, date: false }));
    const deps = senderDeps(w.rt);
    await sendRow(deps, w.rt.rows.get('b1', 0)!);
    w.sql(0, 'next_try_at = 0');
    await sendRow(deps, w.rt.rows.get('b1', 0)!);
    const row = w.rt.rows.get('b1', 0)!;
    expect(row.state).toBe('completed');
    expect(row.note ?? '').toMatch(/this may be that earlier purchase/);
  });
});

/** As in test/unit/money-defects.test.ts: a Retry-After hold starting the moment the intent is committed, and a stop during it. */
function holdingClient(rt: Runtime, onHold: () => void): Runtime['account']['client'] {
  const client = rt.account.client;
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'submitOrder') return Reflect.get(target, prop, receiver) as unknown;
      return (body: Parameters<typeof client.submitOrder>[0], opts: Parameters<typeof client.submitOrder>[1]) =>
        target.submitOrder(body, {
          ...opts,
          beforeSend: () => {
            opts?.beforeSend?.();
            rt.account.scheduler.holdOff(25_000);
            setTimeout(onHold, 50);
          },
        });
    },
  });
}
