/** The client's contract with the rate scheduler (CallGate), beforeSend, the request timeout and Retry-After. */
import { describe, expect, it } from 'vitest';
import type { CallGate, CallInfo } from '../../src/api/client.js';
import { parseRetryAfter } from '../../src/api/classify.js';
import { apiFailure, countingGate, failure, money, setup, trx } from './helpers.js';

const pubg = () => ({ pid: 'PUBG-60', trxid: trx(), userId: '5123456' });

describe('parseRetryAfter (§8: Retry-After in seconds; RFC 9110 also allows an HTTP date)', () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);
  it('§8: delay-seconds → milliseconds', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
    expect(parseRetryAfter(['3', '9'], now)).toBe(3000);
  });
  it('§8: HTTP date (IMF-fixdate, RFC 850, asctime) → milliseconds from now; a past date → 0', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter(new Date(now + 5000).toUTCString(), now)).toBe(5000);
    expect(parseRetryAfter('Wednesday, 01-Jan-25 12:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed Jan  1 12:00:20 2025', now)).toBe(20_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 11:59:00 GMT', now)).toBe(0);
  });
  it('§8: garbage, empty or absent → undefined (never "retry at once")', () => {
    for (const v of [undefined, '', '   ', 'soon', 'later please', '12abc', '-5', '1,5', '0x10', 'Monday soon', 'Infinity', '1e3', []]) {
      expect(parseRetryAfter(v as string | string[] | undefined, now), JSON.stringify(v)).toBeUndefined();
    }
  });
});

describe('§8 CallGate (client contract): consulted before every request', () => {
  it('§8: every endpoint method asks the gate once, with its route, method and priority', async () => {
    const gate = countingGate();
    const { sb, api } = await setup({}, { gate });
    const placed = await api.submitOrder(pubg());
    await api.services();
    await api.products();
    await api.catalog();
    await api.myIp();
    await api.balance();
    await api.getOrder(placed.orderId);
    await api.history({ limit: 5 });
    await api.history({ page: 1 }, { priority: 0 });
    expect(gate.calls).toEqual<CallInfo[]>([
      { route: 'submit', method: 'POST', priority: 30 },
      { route: 'services', method: 'GET', priority: 10 },
      { route: 'products', method: 'GET', priority: 10 },
      { route: 'products', method: 'GET', priority: 10 },
      { route: 'my-ip', method: 'GET', priority: 10 },
      { route: 'balance', method: 'GET', priority: 10 },
      { route: 'order', method: 'GET', priority: 10 },
      { route: 'history', method: 'GET', priority: 10 },
      { route: 'history', method: 'GET', priority: 0 },
    ]);
    expect(sb.admin.calls()).toHaveLength(gate.calls.length);
  });

  it('§8: failed calls are gated too (one acquire per request, also for 4xx answers)', async () => {
    const gate = countingGate();
    const { sb, api } = await setup({}, { gate });
    await apiFailure(api.getOrder('ORD0'), 'not-found');
    await apiFailure(api.submitOrder({ pid: 'NOPE', trxid: trx(), userId: '1' }), 'rejected');
    expect(gate.calls.map((c) => c.route)).toEqual(['order', 'submit']);
    expect(sb.admin.calls()).toHaveLength(2);
  });

  it('§8: nothing leaves before the gate admits the call', async () => {
    let release!: () => void;
    const admitted = new Promise<void>((r) => { release = r; });
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => { asked = r; });
    const gate: CallGate = { acquire: async () => { asked(); await admitted; }, holdOff: () => {} };
    const { sb, api } = await setup({}, { gate });
    const pending = api.balance();
    await wasAsked;
    expect(sb.admin.calls()).toHaveLength(0);
    release();
    expect((await pending).currency).toBe('USD');
    expect(sb.admin.calls()).toHaveLength(1);
  });

  it('§8: a gate that refuses (abort) → the error is passed on and nothing is sent', async () => {
    const refused = new Error('scheduler stopped');
    const gate: CallGate = { acquire: async () => { throw refused; }, holdOff: () => {} };
    const { sb, api } = await setup({}, { gate });
    expect(await failure(api.submitOrder(pubg()))).toBe(refused);
    expect(sb.admin.calls()).toHaveLength(0);
    expect(money(sb).orders).toBe(0);
  });

  it('§8: holdOff is called with Retry-After on 429 RATE_LIMIT (real window), and only then', async () => {
    const gate = countingGate();
    const { api } = await setup({ rateLimits: [{ limit: 1, windowMs: 60_000 }] }, { gate });
    await api.balance();
    const e = await apiFailure(api.balance(), 'retry-later');
    expect(e).toMatchObject({ status: 429, apiCode: 'RATE_LIMIT' });
    expect(e.retryAfterMs).toBeGreaterThanOrEqual(59_000);
    expect(e.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(gate.holdOffs).toEqual([e.retryAfterMs]);
    expect(gate.events).toEqual(['acquire:balance', 'acquire:balance', `holdOff:${e.retryAfterMs}`]);
  });
});

describe('§4.5 beforeSend (client contract)', () => {
  it('§4.5: runs after the gate admits the call and before the request leaves', async () => {
    const gate = countingGate();
    const { sb, api } = await setup({}, { gate });
    let callsAtBeforeSend = -1;
    const o = await api.submitOrder(pubg(), {
      beforeSend: () => {
        gate.events.push('beforeSend');
        callsAtBeforeSend = sb.admin.calls().length;
      },
    });
    expect(o.status).toBe('completed');
    expect(gate.events).toEqual(['acquire:submit', 'beforeSend']);
    expect(callsAtBeforeSend).toBe(0);
    expect(sb.admin.calls()).toHaveLength(1);
  });

  it('§4.5: if it throws, nothing is sent (sandbox calls and ledger unchanged) and that error is passed on', async () => {
    const gate = countingGate();
    const { sb, api } = await setup({}, { gate });
    const boom = new Error('intent not committed');
    const before = sb.admin.ledger();
    expect(await failure(api.submitOrder(pubg(), { beforeSend: () => { throw boom; } }))).toBe(boom);
    expect(gate.calls).toHaveLength(1);
    expect(sb.admin.calls()).toHaveLength(0);
    expect(sb.admin.ledger()).toEqual(before);
  });
});

// The bounds below test that a call ENDS (the failure they guard against is a call hanging until the
// server goes away), not how fast: 10 s of slack, so a loaded 2-core machine cannot fail them.
describe('§4 / §7 request timeout (client contract): no answer → ambiguous', () => {
  it('§7 ambiguous: bounds a call against the blackhole fault: ambiguous within timeout + 1 s', async () => {
    const { api } = await setup({ faults: { blackhole: true } }, { timeoutMs: 400 });
    const started = Date.now();
    const e = await apiFailure(api.balance(), 'ambiguous');
    expect(Date.now() - started).toBeLessThan(400 + 10_000);
    expect(e.status).toBeUndefined();
    expect(e.message).toContain('no answer within 400 ms');
  });

  it('§7 ambiguous: bounds a POST /orders against the blackhole fault too', async () => {
    const { api } = await setup({ faults: { blackhole: true } }, { timeoutMs: 400 });
    const started = Date.now();
    await apiFailure(api.submitOrder(pubg()), 'ambiguous');
    expect(Date.now() - started).toBeLessThan(400 + 10_000);
  });

  it('§8: time spent waiting in the gate does not count against the request timeout', async () => {
    let waited = false;
    const gate: CallGate = {
      acquire: () => new Promise<void>((r) => setTimeout(() => { waited = true; r(); }, 400)),
      holdOff: () => {},
    };
    const { api } = await setup({}, { gate, timeoutMs: 200 });
    expect((await api.balance()).currency).toBe('USD');
    expect(waited).toBe(true);
  });

  it("§7 ambiguous: the caller's abort signal ends a call early → ambiguous", async () => {
    const { api } = await setup({ faults: { blackhole: true } }, { timeoutMs: 10_000 });
    const ac = new AbortController();
    const started = Date.now();
    const pending = api.balance({ signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await apiFailure(pending, 'ambiguous');
    expect(Date.now() - started).toBeLessThan(100 + 10_000);
  });
});
