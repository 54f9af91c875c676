/**
 * The real-world answer style (issue 11), over HTTP: what a real deployment's answers look like,
 * and that the spec style is unchanged. Money and fates are in real-world-money.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { admin, exactIds, get, isFalse, isTrue, manualClock, order, raw, start, startRealWorld, stateOf, trx, WORDS } from './helpers.js';

const ORDER_FIELDS = ['orderCreated', 'orderId', 'id', 'status', 'game', 'packName', 'amountUsd', 'durationSec', 'userId',
  'serverId', 'moreId', 'codes', 'error', 'refunded', 'idempotentReplay'];
const MONEY = /^\d+\.\d{2,6}$/;

describe('answer style: spec stays the default', () => {
  it('without `answers` the sandbox answers in the spec types: numbers, ORD ids, trxid echoed, no manual order', async () => {
    const sb = await start();
    expect((await admin(sb, 'GET', 'answers')).body.answers.style).toBe('spec');
    expect((await get(sb, '/balance')).body).toEqual({ success: true, balanceUsd: 1000, currency: 'USD' });
    const t = trx();
    const r = await raw(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: t, userId: '5123456' });
    expect(r.json).toEqual({
      orderCreated: true, orderId: 'ORD1000001', status: 'completed', game: 'pubg', packName: '60 UC', amountUsd: 0.92,
      durationSec: 0, userId: '5123456', trxid: t, pid: 'PUBG-60', createdAt: expect.any(String),
    });
    expect((await get(sb, '/products')).body.products.find((p: any) => p.id === 'PUBG-60')).not.toHaveProperty('quantity');
    expect(sb.admin.ledger().orders.map((o) => o.source)).toEqual(['api']);
    const rl = await start({ rateLimits: [{ limit: 1, windowMs: 60_000 }] });
    await get(rl, '/balance');
    expect((await get(rl, '/balance')).headers.get('retry-after')).toBe('60');
  });
});

describe('answer style: real-world presentation', () => {
  it('/balance: balanceUsd a numeric string, currency sometimes left out, success as true/"true"/1', async () => {
    const sb = await startRealWorld();
    const seen = { currency: 0, none: 0, success: new Set<unknown>() };
    for (let i = 0; i < 40; i++) {
      const b = (await raw(sb, 'GET', '/balance')).json;
      expect(b.balanceUsd).toBe('999.08'); // 1000 less the account's manual order (0.92)
      if ('currency' in b) { expect(b.currency).toBe('USD'); seen.currency++; } else seen.none++;
      expect(isTrue(b.success)).toBe(true);
      seen.success.add(b.success);
    }
    expect(seen.currency).toBeGreaterThan(0);
    expect(seen.none).toBeGreaterThan(0);
    expect(seen.success.size).toBeGreaterThan(1);
  });

  it('catalog: prices as strings equal to the spec prices; top-up packs carry null stock fields; lines null options', async () => {
    const spec = (await get(await start(), '/products')).body.products as any[];
    const sb = await startRealWorld();
    const products = (await raw(sb, 'GET', '/products')).json.products as any[];
    expect(products.map((p) => p.id)).toEqual(spec.map((p) => p.id));
    for (const p of products) {
      const s = spec.find((x) => x.id === p.id);
      expect(p.price).toMatch(MONEY);
      expect(Number(p.price)).toBe(s.price);
      if (s.quantity === undefined) {
        expect(p).toMatchObject({ quantity: null, inStock: null, quantityMin: null, quantityMax: null });
      } else {
        expect(Number(p.quantity)).toBe(s.quantity);
        expect(Number(p.quantityMax)).toBe(s.quantityMax);
        expect(isTrue(p.inStock) || isFalse(p.inStock)).toBe(true);
        expect(isTrue(p.inStock)).toBe(s.inStock);
      }
    }
    expect(new Set(products.filter((p) => p.quantity !== null).map((p) => typeof p.quantity))).toEqual(new Set(['string', 'number']));
    const services = (await raw(sb, 'GET', '/services')).json.services as any[];
    expect(services.find((s) => s.slug === 'pubg')).toMatchObject({ serverIdOptions: null, regionOptions: null });
    expect(services.find((s) => s.slug === 'wutheringwaves').serverIdOptions.length).toBeGreaterThan(1);
    expect(services.find((s) => s.slug === 'oncehuman')).toMatchObject({ serverIdOptions: null, regionOptions: expect.any(Array) });
  });

  it('an order: every field present (null when empty), numbers as strings, numeric user id as a number, no trxid/pid/createdAt', async () => {
    const sb = await startRealWorld();
    const r = await raw(sb, 'POST', '/orders', { pid: 'PUBG-325', trxid: trx(), userId: '5123456' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(ORDER_FIELDS);
    expect(r.json).toMatchObject({
      game: 'pubg', packName: '325 UC', amountUsd: '4.55', durationSec: '0', userId: 5123456,
      serverId: null, moreId: null, codes: null, error: null, refunded: null, idempotentReplay: null,
    });
    expect(isTrue(r.json.orderCreated)).toBe(true);
    expect(stateOf(r.json.status)).toBe('completed');
    const [id] = exactIds(r.text);
    expect(r.text).toContain(`"orderId":${id},"id":${id},`); // a JSON number, and `id` beside it
    const oh = await raw(sb, 'POST', '/orders', { pid: 'OH-60', trxid: trx(), userId: '7001234', region: 'eu', moreId: '1001' });
    expect(oh.json).toMatchObject({ userId: 7001234, serverId: 'Europe', moreId: '1001' });
    const riot = await raw(sb, 'POST', '/orders', { pid: 'VAL-475', trxid: trx(), userId: 'Player#EUW1' });
    expect(riot.json.userId).toBe('Player#EUW1');
    const zeros = await raw(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: trx(), userId: '0051234' });
    expect(zeros.json.userId).toBe('0051234'); // a number would lose the zeros
    const key = await raw(sb, 'POST', '/orders', { pid: 'KEY-PUBG-60', trxid: trx(), quantity: 3 });
    expect(key.json).toMatchObject({ userId: null, amountUsd: '2.70' });
    const t = trx();
    const first = await raw(sb, 'POST', '/orders', { pid: 'PUBG-325', trxid: t, userId: '5123456' });
    const again = await raw(sb, 'POST', '/orders', { pid: 'PUBG-325', trxid: t, userId: '5123456' });
    expect(isTrue(again.json.idempotentReplay)).toBe(true);
    expect(exactIds(again.text)).toEqual(exactIds(first.text));
  });

  it('ids: JSON numbers, some 19-digit ids above 2^53 written as raw digits; the exact id finds the order, a rounded one does not', async () => {
    const sb = await startRealWorld();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await raw(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: trx(), userId: '5123456' });
      ids.push(exactIds(r.text)[0] as string);
      expect(r.text).toMatch(/"orderId":\d+,"id":\d+,/);
    }
    const big = ids.filter((id) => id.length === 19);
    const small = ids.filter((id) => id.length <= 15);
    expect(big.length).toBeGreaterThan(0);
    expect(small.length).toBeGreaterThan(0);
    const ledger = sb.admin.ledger().orders.filter((o) => o.source === 'api');
    expect(ledger.map((o) => o.publicId)).toEqual(ids);
    for (const id of big) {
      expect(BigInt(id) > 2n ** 53n).toBe(true);
      const rounded = String(BigInt(JSON.parse(id) as number)); // what JSON.parse makes of it
      expect(rounded).not.toBe(id);
      const found = await raw(sb, 'GET', `/orders/${id}`);
      expect(found.status).toBe(200);
      expect(exactIds(found.text)).toEqual([id]);
      expect((await raw(sb, 'GET', `/orders/${rounded}`)).status).toBe(404);
    }
    for (const id of small) expect(exactIds((await raw(sb, 'GET', `/orders/${id}`)).text)).toEqual([id]);
    // The spec id keeps working, so a style switch strands no order.
    expect(exactIds((await raw(sb, 'GET', `/orders/${ledger[0]!.orderId}`)).text)).toEqual([ids[0]]);
    expect((await raw(sb, 'GET', '/orders/12345')).status).toBe(404);
  });

  it('status words: capitalised aliases varied per order, always agreeing with the ledger; Refunded only on a refunded cancel', async () => {
    const clock = manualClock();
    const sb = await startRealWorld({
      now: clock.now, fulfilment: { processingShare: 0.5, failShare: 0.4, processingMs: [1000, 1000], seed: 11 },
      realWorld: { instantFailShare: 0.3, unrefundedShare: 0.5 },
    });
    const words: Record<string, Set<string>> = { completed: new Set(), processing: new Set(), cancelled: new Set() };
    const check = (o: any, truth: any) => {
      expect(o.status).toMatch(/^[A-Z][a-z]+$/);
      expect(stateOf(o.status)).toBe(truth.status);
      if (o.status === 'Refunded') expect(truth.refunded).toBe(true);
      words[truth.status]!.add(o.status);
    };
    for (let i = 0; i < 60; i++) {
      const r = await raw(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: `W-${i}`, userId: '5123456' });
      check(r.json, sb.admin.ledger().orders.find((o) => o.trxid === `W-${i}`));
    }
    clock.advance(1000);
    const h = await raw(sb, 'GET', '/history?limit=200');
    const ids = exactIds(h.text);
    const truth = sb.admin.ledger().orders;
    (h.json.orders as any[]).forEach((o, i) => {
      const t = truth.find((x) => x.publicId === ids[i])!;
      if (t.source === 'api') check(o, t);
    });
    for (const k of ['completed', 'processing', 'cancelled']) expect(words[k]!.size, k).toBeGreaterThan(1);
    for (const [k, set] of Object.entries(words)) for (const w of set) expect(WORDS[k as keyof typeof WORDS]).toContain(w);
  });

  it('booleans vary as true / "true" / 1 across orders; history rows have no trxid, pid or createdAt and no durationSec', async () => {
    const sb = await startRealWorld();
    for (let i = 0; i < 30; i++) await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' });
    const h = await raw(sb, 'GET', '/history?limit=50');
    expect(h.json.count).toBe('31'); // 30 orders and the manual one
    const orders = h.json.orders as any[];
    expect(new Set(orders.map((o) => o.orderCreated))).toEqual(new Set([true, 'true', 1]));
    for (const o of orders) {
      expect(o).not.toHaveProperty('trxid');
      expect(o).not.toHaveProperty('pid');
      expect(o).not.toHaveProperty('createdAt');
      expect(o.durationSec).toBeNull();
      expect(o.amountUsd).toBe('0.92');
    }
    const paged = (await raw(sb, 'GET', '/history?page=2&pageSize=10')).json;
    expect(paged).toMatchObject({ count: '10', total: '31', page: '2', pageSize: '10' });
    expect(isTrue(paged.hasMore)).toBe(true);
  });

  it('codes come as an array, one comma-separated string, or [{code, pin}] — always the ledger\'s codes', async () => {
    const sb = await startRealWorld({ realWorld: { lateCodesShare: 0 } });
    const shapes = new Set<string>();
    for (let i = 0; i < 24; i++) {
      const r = await raw(sb, 'POST', '/orders', { pid: i % 2 ? 'STEAM-5' : 'KEY-PUBG-60', trxid: `C-${i}`, quantity: 2 });
      const truth = sb.admin.ledger().orders.find((o) => o.trxid === `C-${i}`)!.codes as string[];
      const c = r.json.codes;
      let got: string[];
      if (typeof c === 'string') { shapes.add('string'); got = c.split(','); }
      else if (typeof c[0] === 'string') { shapes.add('array'); got = c; }
      else { shapes.add('objects'); got = c.map((x: any) => x.code); for (const x of c) expect(x.pin).toMatch(/^\d{4}$/); }
      expect(got).toEqual(truth);
      expect(truth).toHaveLength(2);
    }
    expect(shapes).toEqual(new Set(['string', 'array', 'objects']));
  });

  it('late codes: a key order says completed without codes, and the codes appear on a read after the delay', async () => {
    const clock = manualClock();
    const sb = await startRealWorld({ now: clock.now, realWorld: { lateCodesShare: 1, lateCodesMs: [2000, 2000] } });
    const r = await raw(sb, 'POST', '/orders', { pid: 'KEY-PUBG-60', trxid: trx(), quantity: 2 });
    expect(stateOf(r.json.status)).toBe('completed');
    expect(r.json.codes === null || (Array.isArray(r.json.codes) && r.json.codes.length === 0)).toBe(true);
    const truth = sb.admin.ledger().orders.find((o) => o.source === 'api')!;
    expect(truth.codes).toHaveLength(2); // the codes exist; only the answer lags
    const id = exactIds(r.text)[0];
    clock.advance(1999);
    const early = (await raw(sb, 'GET', `/orders/${id}`)).json.codes;
    expect(early === null || early.length === 0).toBe(true);
    clock.advance(1);
    const late = (await raw(sb, 'GET', `/orders/${id}`)).json.codes;
    const list = typeof late === 'string' ? late.split(',') : late.map((x: any) => (typeof x === 'string' ? x : x.code));
    expect(list).toEqual(truth.codes);
  });

  it('errors: code null when there is none, success as false/"false"/0; a rejection at submit uses a cancelled word', async () => {
    const sb = await startRealWorld({ balanceUsd: 1 });
    const bad = await raw(sb, 'POST', '/orders', { pid: 'NOPE', trxid: trx() });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: null, error: 'UNKNOWN PID' });
    expect(isFalse(bad.json.success)).toBe(true);
    const poor = await raw(sb, 'POST', '/orders', { pid: 'PUBG-8100', trxid: trx(), userId: '5123456' });
    expect(poor.status).toBe(400);
    expect(poor.json).toMatchObject({ orderId: null, game: 'pubg', error: 'INSUFFICIENT BALANCE' });
    expect(isFalse(poor.json.orderCreated)).toBe(true);
    expect(stateOf(poor.json.status)).toBe('cancelled');
    expect((await raw(sb, 'GET', '/orders/ORD9999999')).json).toMatchObject({ code: null, error: 'ORDER NOT FOUND' });
  });

  it('429 from the limiter carries no Retry-After; a forced 429 keeps the header it asked for', async () => {
    const sb = await startRealWorld({ rateLimits: [{ limit: 1, windowMs: 60_000 }] });
    await raw(sb, 'GET', '/balance');
    const r = await raw(sb, 'GET', '/balance');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBeNull();
    expect(r.json).toMatchObject({ code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' });
    await admin(sb, 'POST', 'faults', { forceRateLimit: { remaining: 1, retryAfterSec: 7 } });
    expect((await raw(sb, 'GET', '/balance')).headers.get('retry-after')).toBe('7');
  });
});

describe('answer style: switching', () => {
  it('an order placed in the spec style keeps its ORD… id after the switch to real-world (answers and history); a new one gets digits', async () => {
    const sb = await start();
    const before = await order(sb, { pid: 'PUBG-60', trxid: trx('SW'), userId: '5123456' });
    const ord = before.body.orderId as string;
    expect(ord).toMatch(/^ORD\d+$/);
    await admin(sb, 'POST', 'answers', { style: 'real-world', htmlShare: 0 });
    const got = await raw(sb, 'GET', `/orders/${ord}`);
    expect(got.json.orderId).toBe(ord);
    const after = await raw(sb, 'POST', '/orders', { pid: 'PUBG-60', trxid: trx('SW'), userId: '5123457' });
    const fresh = exactIds(after.text)[0] as string;
    expect(fresh).toMatch(/^\d+$/);
    const hist = await raw(sb, 'GET', '/history?page=1&pageSize=50');
    const listed = (hist.json.orders as { orderId: unknown }[]).map((o) => String(o.orderId));
    expect(listed).toContain(ord);
    expect(exactIds(hist.text)).toContain(fresh);
    expect(sb.admin.ledger().orders.find((o) => o.orderId === ord)?.publicId).toBe(ord);
  });

  it('POST /__sandbox/answers (admin token) switches at run time and validates; GET shows the style and settings', async () => {
    const sb = await start();
    expect((await admin(sb, 'POST', 'answers', { style: 'real-world' }, 'wrong-token')).status).toBe(403);
    expect((await admin(sb, 'POST', 'answers', { style: 'bogus' })).status).toBe(400);
    expect((await admin(sb, 'POST', 'answers', { htmlShare: 2 })).status).toBe(400);
    expect((await admin(sb, 'POST', 'answers', { htmlshare: 0.1 })).body.error).toMatch(/unknown answers setting htmlshare/);
    expect((await admin(sb, 'POST', 'answers', { lateCodesMs: [5, 1] })).status).toBe(400);
    expect((await get(sb, '/balance')).body.balanceUsd).toBe(1000);
    const on = await admin(sb, 'POST', 'answers', { style: 'real-world', htmlShare: 0 });
    expect(on.body.answers).toMatchObject({ style: 'real-world', htmlShare: 0, unrefundedShare: 0.5, instantFailShare: 0.5 });
    expect((await raw(sb, 'GET', '/balance')).json.balanceUsd).toBe('999.08');
    expect((await admin(sb, 'GET', 'answers')).body.answers.style).toBe('real-world');
    await admin(sb, 'POST', 'answers', { style: 'spec' });
    expect((await get(sb, '/balance')).body).toEqual({ success: true, balanceUsd: 999.08, currency: 'USD' });
  });
});

