/** §5, §7, §4.5: every failure row → ApiError with status, apiCode, apiError and ONE classification. */
import { describe, expect, it, vi } from 'vitest';
import { classifyFailure } from '../../src/api/classify.js';
import { apiFailure, client, countingGate, KEY, money, OTHER_KEY, sandbox, setup, trx } from './helpers.js';

const pubg = (extra: Record<string, unknown> = {}) => ({ pid: 'PUBG-60', trxid: trx(), userId: '5123456', ...extra });

describe('§7 / §4.5 rejected at submit (nothing created, nothing charged)', () => {
  const rows: { title: string; body: () => Record<string, unknown>; apiCode: string; apiError: string; prep?: (sb: Awaited<ReturnType<typeof sandbox>>) => void }[] = [
    { title: '400 INVALID BODY (field of the wrong type)', body: () => pubg({ userId: true }), apiCode: 'INVALID_BODY', apiError: 'INVALID BODY' },
    { title: '400 INVALID BODY (quantity not an integer)', body: () => ({ pid: 'KEY-PUBG-60', trxid: trx(), quantity: 1.5 }), apiCode: 'INVALID_BODY', apiError: 'INVALID BODY' },
    { title: '400 INVALID REQUEST (userId missing where the line needs it)', body: () => ({ pid: 'PUBG-60', trxid: trx() }), apiCode: 'INVALID_REQUEST', apiError: 'INVALID REQUEST' },
    { title: '400 INVALID REQUEST (trxid missing)', body: () => ({ pid: 'PUBG-60', userId: '5123456' }), apiCode: 'INVALID_REQUEST', apiError: 'INVALID REQUEST' },
    { title: '400 INVALID REQUEST (zoneId missing on an ML-style line)', body: () => ({ pid: 'ML-86', trxid: trx(), userId: '123456' }), apiCode: 'INVALID_REQUEST', apiError: 'INVALID REQUEST' },
    { title: '400 UNKNOWN PID', body: () => pubg({ pid: 'NO-SUCH-PACK' }), apiCode: 'UNKNOWN_PID', apiError: 'UNKNOWN PID' },
    { title: '400 INVALID PACK (serverId not one of the options)', body: () => ({ pid: 'WW-60', trxid: trx(), userId: '800123', serverId: 'Mars' }), apiCode: 'INVALID_PACK', apiError: 'INVALID PACK' },
    { title: '400 GAME DISABLED (line exists, not orderable)', body: () => ({ pid: 'GI-60', trxid: trx(), userId: '800123', serverId: 'Asia' }), apiCode: 'GAME_DISABLED', apiError: 'GAME DISABLED' },
    { title: '400 code PRODUCT_DISABLED (pack inactive)', body: () => pubg({ pid: 'PRIME-LEGACY' }), apiCode: 'PRODUCT_DISABLED', apiError: 'PRODUCT_DISABLED' },
    {
      title: '400 code INVALID_PRODUCT (pack in another non-active status)', body: () => pubg(), apiCode: 'INVALID_PRODUCT', apiError: 'INVALID_PRODUCT',
      prep: (sb) => sb.admin.setProduct({ id: 'PUBG-60', status: 'paused' }),
    },
    { title: '400 QUANTITY ONLY FOR GAMEKEY OR GIFTCARD (rule 3)', body: () => pubg({ quantity: 1 }), apiCode: 'QUANTITY_ONLY_FOR_GAMEKEY_OR_GIFTCARD', apiError: 'QUANTITY ONLY FOR GAMEKEY OR GIFTCARD' },
    { title: '400 QUANTITY EXCEEDS MAX (rule 2: 501 is never capped)', body: () => ({ pid: 'KEY-PUBG-60', trxid: trx(), quantity: 501 }), apiCode: 'QUANTITY_EXCEEDS_MAX', apiError: 'QUANTITY EXCEEDS MAX' },
  ];
  for (const row of rows) {
    it(`§7: ${row.title} → classification rejected`, async () => {
      const { sb, api } = await setup();
      row.prep?.(sb);
      const e = await apiFailure(api.submitOrder(row.body() as never), 'rejected');
      expect(e).toMatchObject({ status: 400, apiCode: row.apiCode, apiError: row.apiError, method: 'POST', path: '/orders' });
      expect(e.body).toMatchObject({ success: false, error: row.apiError });
      expect(money(sb)).toMatchObject({ orders: 0, charges: 0 });
    });
  }

  it('§8 quantity 500 is the top of the range: accepted with 500 codes', async () => {
    const { api } = await setup();
    const o = await api.submitOrder({ pid: 'KEY-PUBG-60', trxid: trx(), quantity: 500 });
    expect(o.codes).toHaveLength(500);
  });

  it('§7 / §3: 400 INSUFFICIENT BALANCE as { orderCreated:false, status:cancelled, game, error } → insufficient-balance (nothing created); the trxid stays free', async () => {
    const { sb, api } = await setup({ balanceUsd: 0.5 });
    const body = pubg();
    const e = await apiFailure(api.submitOrder(body), 'insufficient-balance');
    expect(e.mayExist).toBe(false);
    expect(e).toMatchObject({ status: 400, apiError: 'INSUFFICIENT BALANCE', apiCode: 'INSUFFICIENT_BALANCE' });
    expect(e.body).toMatchObject({ orderCreated: false, status: 'cancelled', game: 'pubg', error: 'INSUFFICIENT BALANCE' });
    expect(money(sb)).toMatchObject({ orders: 0, charges: 0 });
    sb.admin.setBalance({ balanceUsd: 5 });
    expect(await api.submitOrder(body)).toMatchObject({ status: 'completed' });
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
  });

  it('§7: 400 insufficient stock (quantity above live stock) → rejected, cancelled-shape body', async () => {
    const { sb, api } = await setup();
    const e = await apiFailure(api.submitOrder({ pid: 'KEY-PUBG-660', trxid: trx(), quantity: 4 }), 'rejected');
    expect(e).toMatchObject({ status: 400, apiError: 'INSUFFICIENT STOCK' });
    expect(e.body).toMatchObject({ orderCreated: false, status: 'cancelled', game: 'gamekeypubg' });
    expect(money(sb)).toMatchObject({ orders: 0, charges: 0 });
  });

  it('§7: 400 insufficient stock (out-of-stock card) → rejected', async () => {
    const { api } = await setup();
    const e = await apiFailure(api.submitOrder({ pid: 'STEAM-50', trxid: trx(), quantity: 1 }), 'rejected');
    expect(e).toMatchObject({ status: 400, apiError: 'INSUFFICIENT STOCK' });
  });

  it('§5 / classify choice: 401 INVALID JSON (a POST without a JSON body) → rejected', async () => {
    const { sb, api } = await setup();
    const e = await apiFailure(api.submitOrder(undefined as never), 'rejected');
    expect(e).toMatchObject({ status: 401, apiError: 'INVALID JSON', apiCode: 'INVALID_JSON' });
    expect(money(sb).orders).toBe(0);
  });
});

describe('§5 authentication and account failures → classification account', () => {
  it('§5: 401 MISSING_API_KEY → classification account (no header; the client always sends one, so via fetch + classifyFailure)', async () => {
    const sb = await sandbox();
    const res = await fetch(`${sb.url}/balance`);
    const body = await res.json();
    expect(res.status).toBe(401);
    expect(body).toEqual({ success: false, code: 'MISSING_API_KEY', error: 'MISSING_API_KEY' });
    expect(classifyFailure(res.status, body, { method: 'GET', path: '/balance' })).toMatchObject({ classification: 'account', apiCode: 'MISSING_API_KEY' });
  });

  it('§5: 401 INVALID_API_KEY_FORMAT → classification account', async () => {
    const sb = await sandbox();
    const e = await apiFailure(client(sb, { apiKey: 'short' }).balance(), 'account');
    expect(e).toMatchObject({ status: 401, apiCode: 'INVALID_API_KEY_FORMAT', apiError: 'INVALID_API_KEY_FORMAT' });
  });

  it('§5: 401 INVALID_API_KEY (well-formed, unknown) → classification account, on GET and on POST', async () => {
    const sb = await sandbox();
    const api = client(sb, { apiKey: 'unknown-but-well-formed' });
    expect(await apiFailure(api.balance(), 'account')).toMatchObject({ status: 401, apiCode: 'INVALID_API_KEY' });
    expect(await apiFailure(api.submitOrder(pubg()), 'account')).toMatchObject({ status: 401, apiCode: 'INVALID_API_KEY' });
    expect(money(sb).orders).toBe(0);
  });

  const states = [
    ['api_disabled', 'API_DISABLED'],
    ['disabled_by_admin', 'API_DISABLED_BY_ADMIN'],
    ['not_eligible', 'API_NOT_ELIGIBLE'],
    ['banned', 'ACCOUNT_BANNED'],
    ['restricted', 'ACCOUNT_RESTRICTED'],
  ] as const;
  for (const [state, code] of states) {
    it(`§5: 403 ${code} → classification account (GET and POST)`, async () => {
      const { sb, api } = await setup();
      sb.admin.setAccount({ state });
      expect(await apiFailure(api.balance(), 'account')).toMatchObject({ status: 403, apiCode: code, apiError: code });
      expect(await apiFailure(api.submitOrder(pubg()), 'account')).toMatchObject({ status: 403, apiCode: code });
      expect(money(sb).orders).toBe(0);
    });
  }

  it('§5: 403 IP_ALLOWLIST_REQUIRED (allowlist in use, empty) → classification account', async () => {
    const { sb, api } = await setup();
    sb.admin.setAccount({ ipAllowlist: [] });
    expect(await apiFailure(api.myIp(), 'account')).toMatchObject({ status: 403, apiCode: 'IP_ALLOWLIST_REQUIRED' });
  });

  it('§5: 403 IP_NOT_ALLOWED (caller not listed) → classification account; listing the caller lets it through', async () => {
    const { sb, api } = await setup();
    sb.admin.setAccount({ ipAllowlist: ['203.0.113.7'] });
    expect(await apiFailure(api.submitOrder(pubg()), 'account')).toMatchObject({ status: 403, apiCode: 'IP_NOT_ALLOWED' });
    sb.admin.setAccount({ ipAllowlist: ['203.0.113.7', '127.0.0.1'] });
    expect(await api.myIp()).toBe('127.0.0.1');
  });
});

describe('§7 403 FORBIDDEN → classification forbidden', () => {
  it('§4.5 / §7: 403 FORBIDDEN (trxid belongs to another API user) → forbidden; the other account is not charged', async () => {
    const sb = await sandbox({ accounts: [{ apiKey: KEY, balanceUsd: 10 }, { apiKey: OTHER_KEY, balanceUsd: 10 }] });
    const a = client(sb);
    const b = client(sb, { apiKey: OTHER_KEY });
    const body = pubg();
    await a.submitOrder(body);
    const e = await apiFailure(b.submitOrder(body), 'forbidden');
    expect(e).toMatchObject({ status: 403, apiCode: 'FORBIDDEN', apiError: 'FORBIDDEN' });
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
    expect((await b.balance()).balanceUsd).toBe(10);
  });
});

describe('§7 / §8 retry-later', () => {
  it('§4.5 / §8: 429 DUPLICATE_IN_FLIGHT (same trxid while the first submit is in flight) → retry-later; no holdOff', async () => {
    const gate = countingGate();
    // The first answer is held 30 s: the order stays in flight for as long as the test needs.
    const { sb, api } = await setup({ faults: { slowShare: 1, slowMs: 30_000 } }, { gate });
    const body = pubg();
    const first = apiFailure(api.submitOrder(body), 'ambiguous');
    await vi.waitFor(() => expect(money(sb).orders).toBe(1), { timeout: 10_000, interval: 10 });
    const e = await apiFailure(api.submitOrder(body), 'retry-later');
    expect(e).toMatchObject({ status: 429, apiCode: 'DUPLICATE_IN_FLIGHT', apiError: 'DUPLICATE_IN_FLIGHT' });
    expect(gate.holdOffs).toEqual([]);
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
    await sb.close(); // cuts the held connection: the first submit never got its answer
    expect((await first).status).toBeUndefined();
  });

  it('§8: 429 RATE_LIMIT with Retry-After in seconds → retry-later, retryAfterMs parsed, gate.holdOff(ms)', async () => {
    const gate = countingGate();
    const { sb, api } = await setup({ faults: { forceRateLimit: { remaining: 1, retryAfterSec: 7, format: 'seconds' } } }, { gate });
    const e = await apiFailure(api.balance(), 'retry-later');
    expect(e).toMatchObject({ status: 429, apiCode: 'RATE_LIMIT', apiError: 'TOO MANY REQUESTS', retryAfterMs: 7000 });
    expect(gate.holdOffs).toEqual([7000]);
    expect(money(sb).orders).toBe(0);
  });

  it('§8: 429 RATE_LIMIT with Retry-After as an HTTP date → retry-later, retryAfterMs from the date', async () => {
    const gate = countingGate();
    const { api } = await setup({ faults: { forceRateLimit: { remaining: 1, retryAfterSec: 30, format: 'http-date' } } }, { gate });
    const e = await apiFailure(api.submitOrder(pubg()), 'retry-later');
    expect(e).toMatchObject({ status: 429, apiCode: 'RATE_LIMIT' });
    // Whole-second date; allow the truncated second plus a generous margin for the round trip.
    expect(e.retryAfterMs).toBeGreaterThan(27_000);
    expect(e.retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(gate.holdOffs).toEqual([e.retryAfterMs]);
  });

  for (const code of ['MAINTENANCE', 'API_ORDER_DISABLED'] as const) {
    it(`§4.5 / §7: 503 ${code} on POST /orders → paused (nothing created); GET routes still work`, async () => {
      const { sb, api } = await setup({ faults: { maintenance: { code } } });
      const e = await apiFailure(api.submitOrder(pubg()), 'paused');
      expect(e.mayExist).toBe(false);
      expect(e).toMatchObject({ status: 503, apiCode: code, apiError: code });
      expect((await api.balance()).currency).toBe('USD');
      expect(money(sb).orders).toBe(0);
    });
  }

  it('§7: 503 RATE_LIMIT_UNAVAILABLE → retry-later, on GET as well as POST; no holdOff', async () => {
    const gate = countingGate();
    const { api } = await setup({ faults: { maintenance: { code: 'RATE_LIMIT_UNAVAILABLE' } } }, { gate });
    expect(await apiFailure(api.services(), 'retry-later')).toMatchObject({ status: 503, apiCode: 'RATE_LIMIT_UNAVAILABLE' });
    expect(await apiFailure(api.submitOrder(pubg()), 'retry-later')).toMatchObject({ status: 503, apiCode: 'RATE_LIMIT_UNAVAILABLE' });
    expect(gate.holdOffs).toEqual([]);
  });
});

describe('§7 / §4.5 rule 1 ambiguous: the order may or may not exist (resend the same trxid)', () => {
  it('§4.5 rule 1: lost response (order created, socket destroyed) → ambiguous with no status; a resend of the same trxid replays', async () => {
    const { sb, api } = await setup({ faults: { lostResponseShare: 1 } });
    const body = pubg();
    const e = await apiFailure(api.submitOrder(body), 'ambiguous');
    expect(e.status).toBeUndefined();
    expect(e.apiCode).toBeUndefined();
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
    sb.admin.setFaults({ lostResponseShare: 0 });
    expect(await api.submitOrder(body)).toMatchObject({ idempotentReplay: true, status: 'completed' });
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
  });

  it('§7 5xx before create (500 INTERNAL SERVER ERROR, nothing created) → ambiguous', async () => {
    const { sb, api } = await setup({ faults: { error5xxBeforeShare: 1 } });
    const e = await apiFailure(api.submitOrder(pubg()), 'ambiguous');
    expect(e).toMatchObject({ status: 500, apiError: 'INTERNAL SERVER ERROR' });
    expect(money(sb).orders).toBe(0);
  });

  it('§7 5xx after create (order created and charged, then 500) → ambiguous; resend replays', async () => {
    const { sb, api } = await setup({ faults: { error5xxAfterShare: 1 } });
    const body = pubg();
    const e = await apiFailure(api.submitOrder(body), 'ambiguous');
    expect(e).toMatchObject({ status: 500, apiError: 'INTERNAL SERVER ERROR' });
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
    sb.admin.setFaults({ error5xxAfterShare: 0 });
    expect(await api.submitOrder(body)).toMatchObject({ idempotentReplay: true });
    expect(money(sb).charges).toBe(1);
  });

  it('§4.5 rule 1: a client timeout shorter than the slow fault → ambiguous (the order exists)', async () => {
    const { sb, api } = await setup({ faults: { slowShare: 1, slowMs: 5000 } }, { timeoutMs: 300 });
    const e = await apiFailure(api.submitOrder(pubg()), 'ambiguous');
    expect(e.status).toBeUndefined();
    expect(e.message).toContain('no answer within 300 ms');
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
  });

  it('§4.5 rule 1: blackhole (no answer at all) → ambiguous on POST and GET', async () => {
    const { api } = await setup({ faults: { blackhole: true } }, { timeoutMs: 300 });
    expect((await apiFailure(api.submitOrder(pubg()), 'ambiguous')).message).toContain('no answer within 300 ms');
    expect((await apiFailure(api.balance(), 'ambiguous')).status).toBeUndefined();
  });

  it('§4.5 rule 1: connection refused (nothing listening) → ambiguous with the network code', async () => {
    const sb = await sandbox();
    const url = sb.url;
    await sb.close();
    const e = await apiFailure(client({ url }).balance(), 'ambiguous');
    expect(e.message).toContain('ECONNREFUSED');
  });
});

describe('§4.6 / §7 404 ORDER NOT FOUND → classification not-found', () => {
  it('§4.6: 404 ORDER NOT FOUND (unknown id) → not-found', async () => {
    const { api } = await setup();
    const e = await apiFailure(api.getOrder('ORD9999999'), 'not-found');
    expect(e).toMatchObject({ status: 404, apiError: 'ORDER NOT FOUND', apiCode: 'ORDER_NOT_FOUND', path: '/orders/ORD9999999' });
  });

  it("§4.6: 404 ORDER NOT FOUND (another account's id) → not-found", async () => {
    const sb = await sandbox({ accounts: [{ apiKey: KEY }, { apiKey: OTHER_KEY }] });
    const placed = await client(sb).submitOrder(pubg());
    expect(await apiFailure(client(sb, { apiKey: OTHER_KEY }).getOrder(placed.orderId), 'not-found')).toMatchObject({ status: 404 });
  });
});

describe('§7 501 NOT IMPLEMENTED', () => {
  it('§7: 501 NOT IMPLEMENTED → classifyFailure says account (wrong base URL: stop sending)', () => {
    expect(classifyFailure(501, { success: false, error: 'NOT IMPLEMENTED' }, { method: 'GET', path: '/balance' }))
      .toMatchObject({ classification: 'account', apiCode: 'NOT_IMPLEMENTED', apiError: 'NOT IMPLEMENTED' });
    expect(classifyFailure(501, { success: false, error: 'NOT IMPLEMENTED' }, { method: 'POST', path: '/orders' }).classification).toBe('account');
  });

  it('§7: 501 NOT IMPLEMENTED from the sandbox on an unknown path (fetch) classifies as account', async () => {
    const sb = await sandbox();
    const res = await fetch(`${sb.url}/no-such-route`, { headers: { 'x-api-key': KEY } });
    const body = await res.json();
    expect(res.status).toBe(501);
    expect(body).toEqual({ success: false, error: 'NOT IMPLEMENTED' });
    expect(classifyFailure(res.status, body, { method: 'GET', path: '/no-such-route' }).classification).toBe('account');
  });

  it('§7: 501 through the client with a base URL that points at a build without the routes → ApiError account', async () => {
    const sb = await sandbox();
    const api = client({ url: `${sb.url}/v9` });
    expect(await apiFailure(api.balance(), 'account')).toMatchObject({ status: 501, apiCode: 'NOT_IMPLEMENTED', apiError: 'NOT IMPLEMENTED', path: '/balance' });
    expect(await apiFailure(api.submitOrder(pubg()), 'account')).toMatchObject({ status: 501 });
    expect(money(sb).orders).toBe(0);
  });
});

describe('§7 classifyFailure: one classification per failure (table rows not reachable through the sandbox)', () => {
  const c = (status: number, body: unknown, path = '/orders', method = 'POST') => classifyFailure(status, body, { method, path }).classification;
  it('§7: 429 RATE_LIMIT → retry-later; 503 with another code → paused; other 5xx → ambiguous', () => {
    expect(c(429, { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' })).toBe('retry-later');
    // A 503 with any code but the rate-limit ones means "unavailable": orders pause, polls go on.
    expect(c(503, { success: false, code: 'SOMETHING_ELSE', error: 'x' })).toBe('paused');
    expect(c(502, { success: false, error: 'BAD GATEWAY' })).toBe('ambiguous');
  });
  it('§7: a failure body that is not JSON (proxy page) → ambiguous; a 401/403 is an account problem whatever its body', () => {
    expect(c(400, undefined)).toBe('ambiguous');
    expect(c(403, 'Forbidden')).toBe('account');
  });
  it('§7: QUANTITY_EXCEEDS_MAX as a code and as error text read the same', () => {
    expect(classifyFailure(400, { success: false, code: 'QUANTITY_EXCEEDS_MAX', error: 'QUANTITY EXCEEDS MAX' }, { method: 'POST', path: '/orders' }))
      .toMatchObject({ classification: 'rejected', apiCode: 'QUANTITY_EXCEEDS_MAX' });
    expect(classifyFailure(400, { success: false, error: 'QUANTITY EXCEEDS MAX' }, { method: 'POST', path: '/orders' }).apiCode).toBe('QUANTITY_EXCEEDS_MAX');
  });
  it('§4.6: 404 on a route other than GET /orders/:id → account (wrong base URL), not not-found', () => {
    expect(c(404, { success: false, error: 'NOT FOUND' }, '/balance', 'GET')).toBe('account');
    expect(c(404, { success: false, error: 'ORDER NOT FOUND' }, '/orders/X', 'GET')).toBe('not-found');
  });
});
