/**
 * Issue 23, item 1: the order API's HTTP layer over real HTTP (a listener on 127.0.0.1), a real
 * store and claims in a temp home, and a fake order desk (world.ts). Every status and problem
 * shape, tokens and scopes, codes only with codes:read, batches claimed as inbox files are, and
 * every answer held to the OpenAPI document (conformance.ts), itself valid OpenAPI 3.1.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { releaseAfterEach } from '../e2e/release.js';
import { apiWorld, closeWorlds, CONFIG_TOKEN } from './world.js';
import { expectValidDocument, seen } from './conformance.js';
import { parseResult } from '../e2e/harness.js';

releaseAfterEach();
afterEach(closeWorlds);

const order = { trxid: 'shop-1', pid: 'ml-86', userId: '12345678', zoneId: '2001', quantity: 1, maxPriceUsd: 1.5, meta: { shopOrder: 'A-1' } };
const json = (body: unknown) => ({ body: JSON.stringify(body), type: 'application/json' });

function expectProblem(r: { status: number; headers: Headers; json: any }, status: number, code: string): void {
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.json).toMatchObject({ status, code, type: `/api/v1/docs#problem-${code.toLowerCase()}` });
  expect(typeof r.json.title).toBe('string');
  expect(typeof r.json.detail).toBe('string');
  expect(r.status).toBe(status);
}

describe('the order API over HTTP', () => {
  it('accepts an order (202, Location), answers the same trxid and body as the same order (200), another body 409', async () => {
    const w = await apiWorld();
    const a = await w.call('POST', '/api/v1/orders', json(order));
    expect(a.status).toBe(202);
    expect(a.headers.get('location')).toBe('/api/v1/orders/shop-1');
    expect(a.headers.get('content-type')).toMatch(/^application\/json/);
    expect(a.json).toMatchObject({ trxid: 'shop-1', meta: { shopOrder: 'A-1' } });
    const same = await w.call('POST', '/api/v1/orders', json(order));
    expect(same.status).toBe(200);
    expect(same.headers.get('location')).toBe('/api/v1/orders/shop-1');
    const other = await w.call('POST', '/api/v1/orders', json({ ...order, quantity: 2 }));
    expectProblem(other, 409, 'TRXID_CONFLICT');
    // A refusal's extension members are merged; a refusal's field problems are its errors.
    const poor = await w.call('POST', '/api/v1/orders', json({ ...order, trxid: 'poor-1' }));
    expectProblem(poor, 402, 'INSUFFICIENT_BALANCE');
    expect(poor.json).toMatchObject({ balanceUsd: 1, costUsd: 2 });
    const bad = await w.call('POST', '/api/v1/orders', json({ ...order, trxid: 'bad-1' }));
    expectProblem(bad, 422, 'INVALID_ORDER');
    expect(bad.json.errors).toEqual([{ field: 'pid', reason: 'no such pack in the catalog' }]);
    w.desk.accepting = false;
    expectProblem(await w.call('POST', '/api/v1/orders', json({ ...order, trxid: 'late-1' })), 503, 'NOT_ACCEPTING');
  });

  it('refuses invalid orders with 422 naming each field (unknown fields too) before the desk sees them', async () => {
    const w = await apiWorld();
    const r = await w.call('POST', '/api/v1/orders', json({ ...order, quantity: 0, maxPriceUsd: -1, colour: 'red', callbackUrl: 'ftp://x', queue: 'yes' }));
    expectProblem(r, 422, 'INVALID_ORDER');
    const fields = (r.json.errors as { field: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['callbackUrl', 'colour', 'maxPriceUsd', 'quantity', 'queue']);
    expect(r.json.errors.find((e: any) => e.field === 'colour').reason).toMatch(/unknown field/);
    expectProblem(await w.call('POST', '/api/v1/orders', json({ pid: 'x' })), 422, 'INVALID_ORDER');
    expectProblem(await w.call('POST', '/api/v1/orders', json({ ...order, quantity: 1.5 })), 422, 'INVALID_ORDER');
    expectProblem(await w.call('POST', '/api/v1/orders', json([order])), 422, 'INVALID_ORDER');
    const meta = await w.call('POST', '/api/v1/orders', json({ ...order, meta: { big: 'x'.repeat(4100) } }));
    expectProblem(meta, 422, 'INVALID_ORDER');
    expect(meta.json.errors[0].field).toBe('meta');
    expect(w.desk.orders.size).toBe(0);
  });

  it('answers a body that is not JSON 400, a non-JSON type 415, a body over 16 KB 413 (also chunked)', async () => {
    const w = await apiWorld();
    expectProblem(await w.call('POST', '/api/v1/orders', { body: '{"trxid":', type: 'application/json' }), 400, 'MALFORMED_JSON');
    expectProblem(await w.call('POST', '/api/v1/orders', { body: 'trxid=1', type: 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectProblem(await w.call('POST', '/api/v1/orders', { body: JSON.stringify(order) }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const big = JSON.stringify({ ...order, pack: 'x'.repeat(17 * 1024) });
    expectProblem(await w.call('POST', '/api/v1/orders', { body: big, type: 'application/json' }), 413, 'BODY_TOO_LARGE');
    // No Content-Length: a stream, as curl --data-binary @- sends it.
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close(); } });
    const res = await fetch(`${w.url}/api/v1/orders`, { method: 'POST', body: stream, duplex: 'half', headers: { authorization: `Bearer ${CONFIG_TOKEN}`, 'content-type': 'application/json' } } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(w.desk.orders.size).toBe(0);
  });

  it('requires a bearer token on every data route (401 with WWW-Authenticate), and the scope it needs (403 naming it)', async () => {
    const w = await apiWorld();
    for (const [m, p] of [['POST', '/api/v1/orders'], ['GET', '/api/v1/orders/x'], ['GET', '/api/v1/orders'], ['POST', '/api/v1/batches'], ['GET', '/api/v1/batches/b251126-abcdef'], ['GET', '/api/v1/batches/b251126-abcdef/result']] as const) {
      const body = m === 'POST' ? json(order) : {};
      const none = await w.call(m, p, { token: null, ...body });
      expectProblem(none, 401, 'UNAUTHORIZED');
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expectProblem(await w.call(m, p, { token: 'wrong-token-0123456789abcdef', ...body }), 401, 'UNAUTHORIZED');
    }
    expectProblem(await w.call('GET', '/api/v1/orders', { headers: { authorization: `Basic ${Buffer.from(`x:${CONFIG_TOKEN}`).toString('base64')}` }, token: null }), 401, 'UNAUTHORIZED');
    const reader = w.tokens.create('reader', ['orders:read']).token;
    const denied = await w.call('POST', '/api/v1/orders', { token: reader, ...json(order) });
    expectProblem(denied, 403, 'INSUFFICIENT_SCOPE');
    expect(denied.json.missingScopes).toEqual(['orders:write']);
    expect(denied.json.detail).toContain('orders:write');
    expect(w.desk.orders.size).toBe(0);
    expect((await w.call('GET', '/api/v1/orders', { token: reader })).status).toBe(200);
    // A revoked token stops at the next request.
    const writer = w.tokens.create('shop', ['orders:write']);
    expect((await w.call('POST', '/api/v1/orders', { token: writer.token, ...json(order) })).status).toBe(202);
    expect(w.tokens.revoke(writer.info.id)).toBe(true);
    expectProblem(await w.call('POST', '/api/v1/orders', { token: writer.token, ...json(order) }), 401, 'UNAUTHORIZED');
    // The token is checked before the body is read: no token, no 413 telling the body's size mattered.
    expectProblem(await w.call('POST', '/api/v1/orders', { token: null, body: 'x'.repeat(40_000), type: 'application/json' }), 401, 'UNAUTHORIZED');
  });

  it('POST /players/check: its own scope (players:check), its answers as the document says, a refusal never read as not found', async () => {
    const w = await apiWorld();
    const check = { slug: 'pubgm', userId: '5123456701' };
    // A shop's usual token (write and read orders) may not make checks: they may be charged.
    const shopToken = w.tokens.create('shop', ['orders:write', 'orders:read']).token;
    const denied = await w.call('POST', '/api/v1/players/check', { token: shopToken, ...json(check) });
    expectProblem(denied, 403, 'INSUFFICIENT_SCOPE');
    expect(denied.json.missingScopes).toEqual(['players:check']);
    expectProblem(await w.call('POST', '/api/v1/players/check', { token: null, ...json(check) }), 401, 'UNAUTHORIZED');
    // A checker token may not place orders either.
    const checker = w.tokens.create('checkout', ['players:check']).token;
    expectProblem(await w.call('POST', '/api/v1/orders', { token: checker, ...json(order) }), 403, 'INSUFFICIENT_SCOPE');
    const found = await w.call('POST', '/api/v1/players/check', { token: checker, ...json(check) });
    expect(found.status, found.text).toBe(200);
    expect(found.json).toMatchObject({ found: true, check: 'pubg', player: { userId: '5123456701' }, playerName: 'FakeName1' });
    const nobody = await w.call('POST', '/api/v1/players/check', { token: checker, ...json({ ...check, userId: 'nobody-1' }) });
    expectProblem(nobody, 422, 'PLAYER_NOT_FOUND');
    expect(nobody.json.errors).toEqual([{ field: 'userId', reason: 'no such player' }]);
    const busy = await w.call('POST', '/api/v1/players/check', { token: checker, ...json({ ...check, userId: 'busy-1' }) });
    expectProblem(busy, 429, 'PLAYER_CHECK_RATE_LIMITED');
    expect(busy.headers.get('retry-after')).toBe('7');
    const doubt = await w.call('POST', '/api/v1/players/check', { token: checker, ...json({ ...check, userId: 'doubt-1' }) });
    expectProblem(doubt, 503, 'PLAYER_CHECK_IN_DOUBT');
    expect(doubt.headers.get('retry-after')).toBe('60');
    // Validation: neither pid nor slug, an unknown field, an empty user id: 422 INVALID_CHECK naming each.
    const invalid = await w.call('POST', '/api/v1/players/check', { token: checker, ...json({ userId: '', playerId: 'x' }) });
    expectProblem(invalid, 422, 'INVALID_CHECK');
    expect(invalid.json.errors.map((e: { field: string }) => e.field).sort()).toEqual(['playerId', 'slug', 'userId']);
    expectProblem(await w.call('POST', '/api/v1/players/check', { token: checker, body: '{', type: 'application/json' }), 400, 'MALFORMED_JSON');
    expectProblem(await w.call('POST', '/api/v1/players/check', { token: checker, body: 'x', type: 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectProblem(await w.call('GET', '/api/v1/players/check', { token: checker, check: false }), 405, 'METHOD_NOT_ALLOWED');
  });

  it('shows codes only to a token with codes:read, in an order and in the feed', async () => {
    const w = await apiWorld();
    expect((await w.call('POST', '/api/v1/orders', json(order))).status).toBe(202);
    const plain = w.tokens.create('shop', ['orders:read']).token;
    const codes = w.tokens.create('keys', ['orders:read', 'codes:read']).token;
    const a = await w.call('GET', '/api/v1/orders/shop-1', { token: plain });
    expect(a.status).toBe(200);
    expect(a.json.codes).toBeUndefined();
    expect(a.json.codeCount).toBe(1);
    expect(a.text).not.toContain('CODE-SECRET-1');
    expect(a.json.history).toHaveLength(1);
    const b = await w.call('GET', '/api/v1/orders/shop-1', { token: codes });
    expect(b.json.codes).toEqual(['CODE-SECRET-1']);
    const feedPlain = await w.call('GET', '/api/v1/orders', { token: plain });
    expect(feedPlain.text).not.toContain('CODE-SECRET-1');
    const feedCodes = await w.call('GET', '/api/v1/orders', { token: codes });
    expect(feedCodes.json.events[0].data.codes).toEqual(['CODE-SECRET-1']);
  });

  it('reads an order (404 ORDER_NOT_FOUND when none), and the feed by cursor and limit (400 on a bad cursor or limit)', async () => {
    const w = await apiWorld();
    expectProblem(await w.call('GET', '/api/v1/orders/nope'), 404, 'ORDER_NOT_FOUND');
    for (let i = 1; i <= 5; i++) await w.call('POST', '/api/v1/orders', json({ ...order, trxid: `t-${i}` }));
    const first = await w.call('GET', '/api/v1/orders?limit=2');
    expect(first.json.events.map((e: any) => e.data.trxid)).toEqual(['t-1', 't-2']);
    const next = await w.call('GET', `/api/v1/orders?since=${first.json.next}&limit=1000`);
    expect(next.json.events.map((e: any) => e.data.trxid)).toEqual(['t-3', 't-4', 't-5']);
    const idle = await w.call('GET', `/api/v1/orders?since=${next.json.next}`);
    expect(idle.json).toEqual({ events: [], next: next.json.next });
    const cursor = await w.call('GET', '/api/v1/orders?since=garbage');
    expectProblem(cursor, 400, 'INVALID_CURSOR');
    expect(cursor.json.errors[0].field).toBe('since');
    for (const limit of ['0', '1001', 'ten', '1.5']) expectProblem(await w.call('GET', `/api/v1/orders?limit=${limit}`), 400, 'INVALID_PARAMETER');
    // A trxid with characters a URL must escape is found by its escaped form (white space is no trxid: kernel/identity.ts).
    await w.call('POST', '/api/v1/orders', json({ ...order, trxid: 'a/b#ç?' }));
    expect((await w.call('GET', `/api/v1/orders/${encodeURIComponent('a/b#ç?')}`)).json.trxid).toBe('a/b#ç?');
  });

  it('answers every other path under /api/v1 itself: 404 and 405 problems, never a console page', async () => {
    const w = await apiWorld();
    const nf = await w.call('GET', '/api/v1/nothing', { check: false });
    expectProblem(nf, 404, 'NOT_FOUND');
    const m = await w.call('DELETE', '/api/v1/orders/shop-1', { check: false });
    expectProblem(m, 405, 'METHOD_NOT_ALLOWED');
    expect(m.headers.get('allow')).toBe('GET, HEAD');
    expectProblem(await w.call('PUT', '/api/v1/batches', { check: false }), 405, 'METHOD_NOT_ALLOWED');
  });

  it('answers a failure of the daemon as a 500 problem that does not show the cause', async () => {
    const w = await apiWorld();
    w.desk.failNext = true;
    const r = await w.call('POST', '/api/v1/orders', json(order));
    expectProblem(r, 500, 'INTERNAL');
    expect(r.text).not.toMatch(/SQLITE|secret/);
  });

  it('sends no-store, nosniff and a CSP on every answer', async () => {
    const w = await apiWorld();
    for (const p of ['/api/v1/orders', '/api/v1/docs', '/api/v1/nothing']) {
      const r = await fetch(w.url + p, { headers: { authorization: `Bearer ${CONFIG_TOKEN}` } });
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
  });
});

describe('batches over HTTP', () => {
  const csvBody = 'trxid,pid,userId,zoneId\nb-1,ml-86,123,2001\nb-2,ml-86,124,2001\n';

  it('claims a CSV body as an inbox file is claimed (a batch at once, the runner woken), and the same bytes again as a duplicate', async () => {
    const w = await apiWorld();
    const r = await w.call('POST', '/api/v1/batches?name=shop%20day.csv', { body: csvBody, type: 'text/csv; charset=utf-8' });
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ name: 'shop day.csv', state: 'claimed', done: false, duplicateOf: null });
    expect(r.headers.get('location')).toBe(`/api/v1/batches/${r.json.id}`);
    expect(w.wakes).toBe(1);
    const b = w.rt.batches.get(r.json.id)!;
    expect(readFileSync(join(w.rt.config.home, b.jobFile), 'utf8')).toBe(csvBody);
    // Nothing is left in staging folders, nothing in the inbox.
    expect(readdirSync(w.home.jobs).filter((n) => n.startsWith('.submit-'))).toEqual([]);
    expect(readdirSync(w.home.inbox)).toEqual([]);
    const again = await w.call('POST', '/api/v1/batches', { body: csvBody, type: 'text/csv' });
    expect(again.status).toBe(202);
    expect(again.json.duplicateOf).toBe(r.json.id);
    expect(again.json.name).toMatch(/^api-\d{8}-\d{6}\.csv$/);
    const view = await w.call('GET', `/api/v1/batches/${r.json.id}`);
    expect(view.status).toBe(200);
    expect(view.json.links).toEqual({ self: `/api/v1/batches/${r.json.id}`, result: `/api/v1/batches/${r.json.id}/result` });
    const notDone = await w.call('GET', `/api/v1/batches/${r.json.id}/result`);
    expectProblem(notDone, 409, 'BATCH_NOT_DONE');
    expect(notDone.json.counts).toBeDefined();
  });

  it('writes a JSON array as a CSV with the API field names as header (meta as a JSON cell), and refuses an invalid array with the element\'s path', async () => {
    const w = await apiWorld();
    const r = await w.call('POST', '/api/v1/batches?name=from-json', json([{ trxid: 'j-1', pid: 'ml-86', userId: '1', zoneId: '2', meta: { a: 'x,"y"' } }, { trxid: 'j-2', slug: 'mobile-legends', pack: '86 Diamonds', userId: '3', zoneId: '4', quantity: 2 }]));
    expect(r.status).toBe(202);
    expect(r.json.name).toBe('from-json.csv');
    const rows = parseResult(readFileSync(join(w.rt.config.home, w.rt.batches.get(r.json.id)!.jobFile), 'utf8'));
    expect(rows).toEqual([
      { trxid: 'j-1', pid: 'ml-86', slug: '', pack: '', userId: '1', zoneId: '2', quantity: '', meta: '{"a":"x,\\"y\\""}' },
      { trxid: 'j-2', pid: '', slug: 'mobile-legends', pack: '86 Diamonds', userId: '3', zoneId: '4', quantity: '2', meta: '' },
    ]);
    const bad = await w.call('POST', '/api/v1/batches', json([{ trxid: 'j-3', pid: 'x' }, { trxid: 'j-4', quantity: 0, callbackUrl: 'https://x' }]));
    expectProblem(bad, 422, 'INVALID_ORDER');
    expect(bad.json.errors.map((e: any) => e.field).sort()).toEqual(['[1].callbackUrl', '[1].quantity']);
    expectProblem(await w.call('POST', '/api/v1/batches', json([])), 422, 'INVALID_ORDER');
    expectProblem(await w.call('POST', '/api/v1/batches', { body: '[{', type: 'application/json' }), 400, 'MALFORMED_JSON');
  });

  it('refuses a body it cannot take: no body 400, another type 415, a wrong name 400, over the upload limit 413, while stopping 503', async () => {
    const w = await apiWorld({ batchBodyMax: 64 * 1024 });
    expectProblem(await w.call('POST', '/api/v1/batches', { body: '', type: 'text/csv' }), 400, 'EMPTY_BODY');
    expectProblem(await w.call('POST', '/api/v1/batches', { body: 'x', type: 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const name = await w.call('POST', '/api/v1/batches?name=orders.exe', { body: csvBody, type: 'text/csv' });
    expectProblem(name, 422, 'INVALID_NAME');
    expect(name.json.errors[0].field).toBe('name');
    expectProblem(await w.call('POST', '/api/v1/batches?name=orders.xlsx', { body: csvBody, type: 'text/csv' }), 422, 'INVALID_NAME');
    expectProblem(await w.call('POST', '/api/v1/batches', { body: 'x'.repeat(70 * 1024), type: 'text/csv' }), 413, 'BODY_TOO_LARGE');
    w.stopping = true;
    expectProblem(await w.call('POST', '/api/v1/batches', { body: csvBody, type: 'text/csv' }), 503, 'NOT_ACCEPTING');
    expect(w.rt.batches.list()).toEqual([]);
  });

  it('takes an .xlsx body as a workbook file', async () => {
    const w = await apiWorld();
    const xlsx = readFileSync(new URL('../../examples/orders.xlsx', import.meta.url));
    const r = await w.call('POST', '/api/v1/batches?name=day', { body: xlsx, type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    expect(r.status).toBe(202);
    expect(r.json.name).toBe('day.xlsx');
    expect(readFileSync(join(w.rt.config.home, w.rt.batches.get(r.json.id)!.jobFile)).equals(xlsx)).toBe(true);
  });

  it('reads a batch: 404 BATCH_NOT_FOUND, 400 for what is not a batch id, 409 BATCH_FAILED; the result needs codes:read', async () => {
    const w = await apiWorld();
    expectProblem(await w.call('GET', '/api/v1/batches/b250101-000000'), 404, 'BATCH_NOT_FOUND');
    expectProblem(await w.call('GET', '/api/v1/batches/nope'), 400, 'INVALID_PARAMETER');
    expectProblem(await w.call('GET', '/api/v1/batches/b250101-000000/result'), 404, 'BATCH_NOT_FOUND');
    const reader = w.tokens.create('r', ['orders:read']).token;
    const denied = await w.call('GET', '/api/v1/batches/b250101-000000/result', { token: reader });
    expectProblem(denied, 403, 'INSUFFICIENT_SCOPE');
    expect(denied.json.missingScopes).toEqual(['codes:read']);
    const r = await w.call('POST', '/api/v1/batches', { body: csvBody, type: 'text/csv' });
    w.rt.batches.fail(r.json.id, 'the file has no header row', Date.now());
    const failed = await w.call('GET', `/api/v1/batches/${r.json.id}/result`);
    expectProblem(failed, 409, 'BATCH_FAILED');
    expect(failed.json.fileError).toBe('the file has no header row');
  });
});

describe('the OpenAPI document and its page', () => {
  it('is valid OpenAPI 3.1, needs no token, has a bearer scheme, and documents every route with its problems', async () => {
    const w = await apiWorld();
    const res = await fetch(`${w.url}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    await expectValidDocument(doc);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(doc.paths).sort()).toEqual(['/batches', '/batches/{id}', '/batches/{id}/result', '/orders', '/orders/{trxid}', '/players/check']);
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const s of ['401', '403', '500']) expect(op.responses[s].content, `${method} ${path} ${s}`).toHaveProperty(['application/problem+json']);
        expect(op.security, `${method} ${path}`).toBeDefined();
      }
    }
    expect(doc.paths['/orders'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/OrderInput');
    expect(doc.components.schemas.OrderInput.additionalProperties).toBe(false);
    expect(Object.keys(doc.paths['/batches'].post.requestBody.content).sort()).toEqual(['application/json', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/csv']);
    // The player check: its own scope, its request and answer schemas, every status it can answer.
    const chk = doc.paths['/players/check'].post;
    expect(chk.operationId).toBe('checkPlayer');
    expect(chk.security).toEqual([{ bearer: ['players:check'] }]);
    expect(chk.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/PlayerCheckInput');
    expect(doc.components.schemas.PlayerCheckInput.additionalProperties).toBe(false);
    expect(chk.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/PlayerCheck');
    expect(Object.keys(chk.responses).sort()).toEqual(['200', '400', '401', '403', '413', '415', '422', '429', '500', '502', '503']);
    for (const s of ['422', '429', '502', '503']) expect(chk.responses[s].content, s).toHaveProperty(['application/problem+json']);
    expect(chk.responses['429'].headers).toHaveProperty('Retry-After');
    expect(doc.components.securitySchemes.bearer.description).toContain('players:check');
    // An order's check: the flag in OrderInput, the name in Order, the refusals among POST /orders' answers.
    expect(doc.components.schemas.OrderInput.properties.checkPlayer).toMatchObject({ type: 'boolean' });
    expect(doc.components.schemas.Order.required).toContain('playerName');
    expect(Object.keys(doc.paths['/orders'].post.responses)).toEqual(expect.arrayContaining(['422', '429', '502', '503']));
  });

  it('renders the document as a page of our own markup (no script, no other origin), with an anchor for every problem code', async () => {
    const w = await apiWorld();
    const res = await fetch(`${w.url}/api/v1/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await res.text();
    expect(page).not.toMatch(/<script|https?:\/\//i);
    expect(page).toContain('POST /api/v1/orders');
    expect(page).toContain('id="problem-trxid_conflict"');
    expect(page).toContain('id="schema-Order"');
    for (const m of page.matchAll(/(?:src|href)="([^"]+)"/g)) expect(/^(\/(?!\/)|#)/.test(m[1]!), m[1]).toBe(true);
  });
});

afterAll(() => {
  // Every route and status these tests answered was checked against the document; the main ones were reached.
  for (const pair of [
    'POST /orders 202', 'POST /orders 200', 'POST /orders 400', 'POST /orders 401', 'POST /orders 402', 'POST /orders 403', 'POST /orders 409', 'POST /orders 413', 'POST /orders 415', 'POST /orders 422', 'POST /orders 500', 'POST /orders 503',
    'GET /orders/{trxid} 200', 'GET /orders/{trxid} 404', 'GET /orders 200', 'GET /orders 400',
    'POST /batches 202', 'POST /batches 400', 'POST /batches 413', 'POST /batches 415', 'POST /batches 422', 'POST /batches 503',
    'GET /batches/{id} 200', 'GET /batches/{id} 400', 'GET /batches/{id} 404', 'GET /batches/{id}/result 403', 'GET /batches/{id}/result 404', 'GET /batches/{id}/result 409',
    'POST /players/check 200', 'POST /players/check 400', 'POST /players/check 401', 'POST /players/check 403', 'POST /players/check 415', 'POST /players/check 422', 'POST /players/check 429', 'POST /players/check 503',
  ]) expect(seen.has(pair), pair).toBe(true);
});
