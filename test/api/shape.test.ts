/**
 * §2 response shapes: the client tolerates unknown extra fields and refuses a wrong shape.
 * A tiny node:http server on 127.0.0.1:0 answers what each test scripts, and records the
 * request headers so the auth header the client sends can be checked.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ApiError, ApiResponseShapeError } from '../../src/kernel/errors.js';
import { apiFailure, client, countingGate, failure, KEY, onCleanup } from './helpers.js';

type Script = Record<string, (res: ServerResponse) => void>;

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

async function fakeApi(script: Script) {
  const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
      const fn = script[route] ?? script[`${req.method} *`];
      if (fn) fn(res);
      else json(404, { success: false, error: 'NOT SCRIPTED' })(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onCleanup(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen };
}

const order = { orderCreated: true, orderId: 'ORD1', status: 'completed', game: 'pubg', amountUsd: 1 };

describe('§2 unknown extra fields are tolerated', () => {
  it('§2.4 balance, §2.5 my-ip, §2.1 services, §2.2 products with extra fields parse', async () => {
    const api = client(await fakeApi({
      'GET /balance': json(200, { success: true, balanceUsd: 5.5, currency: 'USD', tier: 'gold', extra: { nested: [1] } }),
      'GET /my-ip': json(200, { success: true, ip: '198.51.100.4', asn: 64500 }),
      'GET /services': json(200, {
        success: true, version: 3, services: [{
          productName: 'X', slug: 'x', gameName: 'X', required: [{ field: 'userId', label: 'ID', hint: 'digits' }], status: 'active', icon: 'x.png',
          serverIdOptions: ['Asia', { id: 2, name: 'Europe' }],
        }],
      }),
      'GET /products': json(200, {
        success: true, products: [{ id: 17, slug: 'x', gameName: 'X', serviceName: 'P', category: 'topup', price: 1.5, status: 'active', currencyOriginal: 'IDR', discount: 0 }],
      }),
    }));
    expect(await api.balance()).toMatchObject({ balanceUsd: 5.5, currency: 'USD' });
    expect(await api.myIp()).toBe('198.51.100.4');
    const [line] = await api.services();
    expect(line?.slug).toBe('x');
    expect(line?.serverIdOptions).toEqual([{ value: 'Asia', label: 'Asia' }, { value: '2', label: 'Europe' }]);
    const [p] = await api.products();
    expect(p).toMatchObject({ id: '17', price: 1.5 });
  });

  it('§2.3 order and §4.7 history with extra fields parse', async () => {
    const api = client(await fakeApi({
      'POST /orders': json(200, { ...order, supplierRef: 'abc', fees: { usd: 0.01 } }),
      'GET /orders/ORD1': json(200, { ...order, status: 'processing', eta: 12 }),
      'GET /history': json(200, { success: true, count: 1, orders: [{ ...order, note: 'x' }], total: 1, hasMore: false, page: 1, pageSize: 20, cursor: 'z' }),
    }));
    expect(await api.submitOrder({ pid: 'P', trxid: 'T1', userId: '1' })).toMatchObject({ orderId: 'ORD1', status: 'completed' });
    expect((await api.getOrder('ORD1')).status).toBe('processing');
    expect(await api.history({ page: 1 })).toMatchObject({ count: 1, total: 1, hasMore: false });
  });
});

describe('§2 a wrong shape is refused', () => {
  it('§2.4: a 200 GET whose required value cannot be read → ApiResponseShapeError (code E_API_RESPONSE_SHAPE)', async () => {
    const api = client(await fakeApi({ 'GET /balance': json(200, { success: true, balanceUsd: 'five', currency: 'USD' }) }));
    const e = await failure(api.balance());
    expect(e).toBeInstanceOf(ApiResponseShapeError);
    expect(e).toMatchObject({ code: 'E_API_RESPONSE_SHAPE', path: '/balance' });
  });

  it('§2.2 / §4.7: a product without a price is skipped and reported, not the whole list; a 200 saying success:false is a failure', async () => {
    const problems: string[] = [];
    const api = client(await fakeApi({
      'GET /products': json(200, { success: true, products: [{ id: 'A', slug: 'a' }, { id: 'B', slug: 'b', price: '1.5' }] }),
      'GET /history': json(200, { success: false, count: 0, orders: [] }),
    }), { onProblem: (_route, p) => problems.push(p) });
    expect((await api.products()).map((p) => p.id)).toEqual(['B']);
    expect(problems).toEqual([expect.stringContaining('products[0]: A: price')]);
    expect(await failure(api.history({ limit: 5 }))).toBeInstanceOf(ApiError);
  });

  it('§2.3 / §3: a 200 GET /orders/:id with a status word nobody knows reads as processing, never as an end', async () => {
    const api = client(await fakeApi({ 'GET /orders/ORD1': json(200, { ...order, status: 'On Hold' }) }));
    expect(await api.getOrder('ORD1')).toMatchObject({ status: 'processing', statusKnown: false, statusWord: 'On Hold' });
  });

  it('§2: a 200 GET whose body is not JSON → ApiResponseShapeError', async () => {
    const api = client(await fakeApi({ 'GET /balance': json(200, '<html>ok</html>') }));
    expect(await failure(api.balance())).toMatchObject({ code: 'E_API_RESPONSE_SHAPE' });
  });

  it('§2.3 / §4.5: a 200 POST /orders that cannot be read, or has no orderId → ambiguous (only a resend can tell)', async () => {
    const api = client(await fakeApi({
      'POST /orders': (res) => json(200, '{"orderCreated":tru')(res),
    }));
    expect(await apiFailure(api.submitOrder({ pid: 'P', trxid: 'T1' }), 'ambiguous')).toMatchObject({ status: 200 });
    const api2 = client(await fakeApi({ 'POST /orders': json(200, { orderCreated: true, status: 'completed' }) }));
    expect(await apiFailure(api2.submitOrder({ pid: 'P', trxid: 'T1' }), 'ambiguous')).toMatchObject({ status: 200 });
  });

  it('§3 a 200 submit saying orderCreated:false, cancelled → what it says: refused, nothing created', async () => {
    const api = client(await fakeApi({ 'POST /orders': json(200, { orderCreated: false, orderId: 'X', status: 'cancelled', game: 'pubg', error: 'INSUFFICIENT BALANCE' }) }));
    const e = await apiFailure(api.submitOrder({ pid: 'P', trxid: 'T1' }), 'insufficient-balance');
    expect(e).toMatchObject({ apiError: 'INSUFFICIENT BALANCE', mayExist: false });
  });

  it('§7: a 4xx/5xx with a non-JSON body (a proxy answered) → ambiguous', async () => {
    const api = client(await fakeApi({ 'POST /orders': json(502, '<html>Bad Gateway</html>'), 'GET /balance': json(400, 'nope') }));
    expect(await apiFailure(api.submitOrder({ pid: 'P', trxid: 'T1' }), 'ambiguous')).toMatchObject({ status: 502, apiCode: undefined });
    expect(await apiFailure(api.balance(), 'ambiguous')).toMatchObject({ status: 400 });
  });
});

describe('§5.1 the auth header on the wire, §4 request format', () => {
  it('§5.1 / §4: default auth sends X-API-Key and no Authorization; GET carries no body; POST sends JSON', async () => {
    const fake = await fakeApi({ 'GET /balance': json(200, { success: true, balanceUsd: 1, currency: 'USD' }), 'POST /orders': json(200, order) });
    const api = client(fake);
    await api.balance();
    await api.submitOrder({ pid: 'P', trxid: 'T1', userId: '42' });
    expect(fake.seen[0]?.headers['x-api-key']).toBe(KEY);
    expect(fake.seen[0]?.headers.authorization).toBeUndefined();
    expect(fake.seen[0]?.body).toBe('');
    expect(fake.seen[1]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(fake.seen[1]?.body ?? '')).toEqual({ pid: 'P', trxid: 'T1', userId: '42' });
  });

  it("§5.1: auth: 'bearer' sends Authorization: Bearer <key> and no X-API-Key", async () => {
    const fake = await fakeApi({ 'GET /balance': json(200, { success: true, balanceUsd: 1, currency: 'USD' }) });
    await client(fake, { auth: 'bearer' }).balance();
    expect(fake.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(fake.seen[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('§4.7 history query: limit in simple mode; page and pageSize in paged mode', async () => {
    const fake = await fakeApi({ 'GET /history': json(200, { success: true, count: 0, orders: [] }) });
    const api = client(fake);
    await api.history();
    await api.history({ limit: 7 });
    await api.history({ page: 2 });
    await api.history({ page: 3, pageSize: 50 });
    expect(fake.seen.map((s) => s.url)).toEqual(['/history', '/history?limit=7', '/history?page=2', '/history?page=3&pageSize=50']);
  });

  it('§8: 429 RATE_LIMIT without Retry-After → retry-later, retryAfterMs undefined, gate held off 1 s', async () => {
    const gate = countingGate();
    const api = client(await fakeApi({ 'GET /balance': json(429, { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' }) }), { gate });
    const e = await apiFailure(api.balance(), 'retry-later');
    expect(e.retryAfterMs).toBeUndefined();
    expect(gate.holdOffs).toEqual([1000]);
    expect(e).toBeInstanceOf(ApiError);
  });
});

describe('§4 / §7 request timeout covers the whole answer', () => {
  it('§7 ambiguous: headers arrive but the body never ends → ambiguous within timeout + 1 s', async () => {
    const api = client(await fakeApi({
      'POST /orders': (res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.write('{"orderCreated":true,'); },
    }), { timeoutMs: 300 });
    const started = Date.now();
    const e = await apiFailure(api.submitOrder({ pid: 'P', trxid: 'T1' }), 'ambiguous');
    expect(Date.now() - started).toBeLessThan(300 + 10_000);
    expect(e.status).toBe(200);
  });
});
