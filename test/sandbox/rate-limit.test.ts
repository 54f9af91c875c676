import { describe, expect, it } from 'vitest';
import { parseRateLimits, RateLimiter, worstWindow } from '../../src/sandbox/rate-limit.js';
import { admin, get, manualClock, order, OTHER_KEY, start, trx } from './helpers.js';

const limited = { status: 429, body: { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' } };

async function burst(sb: { url: string }, n: number, key?: string) {
  return Promise.all(Array.from({ length: n }, () => get(sb, '/balance', key)));
}

describe('§8 rate limits: rolling windows', () => {
  it('§8 1 s rolling window: 40 at 0.9 s + 40 at 1.1 s → the second burst is refused until 1.9 s', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now, rateLimits: [{ limit: 40, windowMs: 1000 }, { limit: 200, windowMs: 60_000 }] });
    clock.set(900);
    expect((await burst(sb, 40)).every((r) => r.status === 200)).toBe(true);
    clock.set(1100);
    const second = await burst(sb, 40);
    expect(second.every((r) => r.status === 429)).toBe(true);
    expect(second[0]).toMatchObject(limited);
    expect(second[0]?.headers.get('retry-after')).toBe('1'); // 0.8 s rounded up
    clock.set(1899);
    expect((await get(sb, '/balance')).status).toBe(429);
    clock.set(1900);
    expect((await burst(sb, 40)).every((r) => r.status === 200)).toBe(true);
    expect((await get(sb, '/balance')).status).toBe(429);
  });

  it('§8 1 min rolling window: 200 calls, then Retry-After counts down to the first call leaving the window', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now, rateLimits: [{ limit: 40, windowMs: 1000 }, { limit: 200, windowMs: 60_000 }] });
    for (let s = 0; s < 5; s++) {
      clock.set(s * 1000);
      expect((await burst(sb, 40)).every((r) => r.status === 200)).toBe(true);
    }
    clock.set(10_000);
    const r = await get(sb, '/balance');
    expect(r).toMatchObject(limited);
    expect(r.headers.get('retry-after')).toBe('50');
    clock.set(59_999);
    expect((await get(sb, '/balance')).status).toBe(429);
    clock.set(60_000);
    expect((await burst(sb, 40)).every((x) => x.status === 200)).toBe(true);
  });

  it('§8 limits are per account; a 429 does not consume budget; every route counts', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now, accounts: [{ apiKey: OTHER_KEY }], rateLimits: [{ limit: 3, windowMs: 1000 }] });
    await get(sb, '/services');
    await get(sb, '/products');
    await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' });
    expect((await get(sb, '/balance')).status).toBe(429);
    expect((await get(sb, '/balance', OTHER_KEY)).status).toBe(200);
    clock.advance(500);
    for (let i = 0; i < 5; i++) expect((await get(sb, '/balance')).status).toBe(429);
    clock.advance(500); // the 429s at 0.5 s did not extend the window
    expect((await get(sb, '/balance')).status).toBe(200);
  });

  it('§8 admin call log and rate-stats: worst rolling count of admitted calls and of arrivals', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now, rateLimits: [{ limit: 5, windowMs: 1000 }] });
    await burst(sb, 8);
    clock.advance(999);
    await burst(sb, 2);
    const stats = (await admin(sb, 'GET', 'rate-stats')).body;
    expect(stats.rateLimited).toBe(5);
    expect(stats.worstPerWindow).toEqual([{ windowMs: 1000, limit: 5, worstAdmitted: 5, worstArrivals: 10 }]);
    const calls = sb.admin.calls();
    expect(calls).toHaveLength(10);
    expect(calls[0]).toMatchObject({ method: 'GET', route: 'GET /balance', status: 200, admitted: true });
    expect(calls.filter((c) => c.status === 429).every((c) => !c.admitted)).toBe(true);
    expect(calls[0]?.account).toMatch(/^[0-9a-f]{12}$/);
    expect(sb.admin.ledger()).toMatchObject({ rateLimited: 5, calls: 10 });
  });

  it('§8 admin routes are not counted in rate limits or the call log', async () => {
    const sb = await start({ rateLimits: [{ limit: 1, windowMs: 60_000 }] });
    for (let i = 0; i < 5; i++) await admin(sb, 'GET', 'ledger');
    expect((await get(sb, '/balance')).status).toBe(200);
    expect(sb.admin.calls()).toHaveLength(1);
  });

  it('§8 forced RATE_LIMIT with Retry-After in seconds; early arrivals are recorded', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now });
    sb.admin.setFaults({ forceRateLimit: { remaining: 2, retryAfterSec: 3, format: 'seconds' } });
    const a = await get(sb, '/balance');
    expect(a).toMatchObject(limited);
    expect(a.headers.get('retry-after')).toBe('3');
    clock.advance(1000); // too early
    expect((await get(sb, '/services')).status).toBe(429);
    clock.advance(3000); // honours the second Retry-After (set at 1 s, runs out at 4 s)
    expect((await get(sb, '/balance')).status).toBe(200);
    const stats = sb.admin.rateStats();
    expect(stats.rateLimited).toBe(2);
    expect(stats.earlyAfterForced).toHaveLength(1);
    expect(stats.earlyAfterForced[0]).toMatchObject({ route: 'GET /services', msEarly: 2000 });
  });

  it('§8 forced RATE_LIMIT with Retry-After as an HTTP date', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now });
    await admin(sb, 'POST', 'faults', { forceRateLimit: { remaining: 1, retryAfterSec: 5, format: 'http-date' } });
    const r = await get(sb, '/balance');
    expect(r.status).toBe(429);
    expect(Date.parse(r.headers.get('retry-after') as string)).toBe(clock.now() + 5000);
    expect((await get(sb, '/balance')).status).toBe(200);
  });
});

describe('§7 503 windows', () => {
  it('§7 MAINTENANCE: POST /orders is 503 while the window is on, GET routes keep working; it ends by itself', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now, faults: { maintenance: { code: 'MAINTENANCE', untilMs: clock.now() + 10_000 } } });
    const t = trx();
    expect(await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' }))
      .toMatchObject({ status: 503, body: { success: false, code: 'MAINTENANCE', error: 'MAINTENANCE' } });
    expect((await get(sb, '/balance')).status).toBe(200);
    clock.advance(10_000);
    expect((await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' })).status).toBe(200);
  });

  it('§7 API_ORDER_DISABLED on POST /orders until cleared; RATE_LIMIT_UNAVAILABLE on every route', async () => {
    const sb = await start({ faults: { maintenance: { code: 'API_ORDER_DISABLED' } } });
    expect(await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' }))
      .toMatchObject({ status: 503, body: { code: 'API_ORDER_DISABLED', error: 'API_ORDER_DISABLED' } });
    expect(sb.admin.ledger().orders).toHaveLength(0);
    sb.admin.setFaults({ maintenance: { code: 'RATE_LIMIT_UNAVAILABLE' } });
    expect(await get(sb, '/balance')).toMatchObject({ status: 503, body: { code: 'RATE_LIMIT_UNAVAILABLE' } });
    sb.admin.setFaults({ maintenance: null });
    expect((await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' })).status).toBe(200);
  });
});

describe('rate-limit unit', () => {
  it('§8 RateLimiter: window edge is exclusive (t + window frees the slot); Retry-After is ceil, at least 1', () => {
    const rl = new RateLimiter([{ limit: 2, windowMs: 1000 }]);
    expect(rl.admit('a', 0).ok).toBe(true);
    expect(rl.admit('a', 10).ok).toBe(true);
    expect(rl.admit('a', 999)).toEqual({ ok: false, retryAfterSec: 1 });
    expect(rl.admit('a', 1000).ok).toBe(true);
    expect(rl.admit('b', 1000).ok).toBe(true);
    const slow = new RateLimiter([{ limit: 1, windowMs: 2500 }]);
    slow.admit('a', 0);
    expect(slow.admit('a', 100)).toEqual({ ok: false, retryAfterSec: 3 });
  });

  it('§8 worstWindow counts per account within any span shorter than the window', () => {
    const calls = [0, 100, 999, 1000, 1500].map((t) => ({ t, account: 'a' }));
    expect(worstWindow(calls, 1000)).toBe(3);
    expect(worstWindow([...calls, { t: 1000, account: 'b' }], 1000)).toBe(3);
    expect(worstWindow([], 1000)).toBe(0);
  });

  it('parseRateLimits reads 40/1s,200/1m', () => {
    expect(parseRateLimits('40/1s,200/1m')).toEqual([{ limit: 40, windowMs: 1000 }, { limit: 200, windowMs: 60_000 }]);
    expect(parseRateLimits('5/500ms')).toEqual([{ limit: 5, windowMs: 500 }]);
    expect(() => parseRateLimits('40 per second')).toThrow(TypeError);
  });
});
