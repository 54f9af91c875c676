import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { admin, get, KEY, manualClock, order, OTHER_KEY, start, trx } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'sandbox-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('§3 fulfilment and money', () => {
  it('§3 processing → completed by time, seen by polling; durationSec counts to completion', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now, fulfilment: { processingShare: 1, processingMs: [3000, 3000] } });
    const r = await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' });
    expect(r.body).toMatchObject({ orderCreated: true, status: 'processing', durationSec: 0 });
    clock.advance(2000);
    expect((await get(sb, `/orders/${r.body.orderId}`)).body).toMatchObject({ status: 'processing', durationSec: 2 });
    clock.advance(5000);
    expect((await get(sb, `/orders/${r.body.orderId}`)).body).toMatchObject({ status: 'completed', durationSec: 3 });
  });

  it('§3 placed then failed: cancelled, INVALID PLAYER, refunded; ledger has charge and refund', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now, balanceUsd: 100, fulfilment: { processingMs: [1000, 1000] } });
    const a = await order(sb, { pid: 'PUBG-660', trxid: trx(), userId: 'will-FAIL-please' });
    const b = await order(sb, { pid: 'FFMENA-100', trxid: trx(), userId: '99999' });
    const c = await order(sb, { pid: 'PUBG-325', trxid: trx(), userId: '5123456' });
    expect(a.body.status).toBe('processing');
    expect(b.body.status).toBe('processing');
    expect(c.body.status).toBe('completed');
    expect((await get(sb, '/balance')).body.balanceUsd).toBeCloseTo(100 - 9.1 - 0.95 - 4.55, 6);
    clock.advance(1000);
    const failed = (await get(sb, `/orders/${a.body.orderId}`)).body;
    expect(failed).toMatchObject({ orderCreated: true, status: 'cancelled', error: 'INVALID PLAYER', refunded: true, durationSec: 1 });
    expect((await get(sb, '/balance')).body.balanceUsd).toBeCloseTo(100 - 4.55, 6);
    const ledger = sb.admin.ledger();
    const kinds = ledger.entries.map((e) => `${e.kind}:${e.orderId}:${e.amountUsd}`);
    expect(kinds).toEqual([
      `charge:${a.body.orderId}:-9.1`, `charge:${b.body.orderId}:-0.95`, `charge:${c.body.orderId}:-4.55`,
      `refund:${a.body.orderId}:9.1`, `refund:${b.body.orderId}:0.95`,
    ]);
    const fp = Object.keys(ledger.balances)[0] as string;
    const sum = ledger.entries.reduce((s, e) => s + e.amountUsd, 100);
    expect(ledger.balances[fp]).toBeCloseTo(sum, 6);
  });

  it('§3 failShare 1 cancels every top-up after processing; keys/cards are never failed', async () => {
    const clock = manualClock();
    const sb = await start({ now: clock.now, fulfilment: { failShare: 1, processingMs: [0, 0] } });
    const r = await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' });
    const k = await order(sb, { pid: 'STEAM-5', trxid: trx() });
    expect(k.body.status).toBe('completed');
    expect((await get(sb, `/orders/${r.body.orderId}`)).body).toMatchObject({ status: 'cancelled', refunded: true });
  });

  it('§3 fulfilment is deterministic per seed + trxid, and differs across seeds', async () => {
    const fates = async (seed: number) => {
      const sb = await start({ fulfilment: { seed, processingShare: 0.5, failShare: 0.2, processingMs: [2000, 8000] } });
      const out: string[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await order(sb, { pid: 'PUBG-60', trxid: `DET-${i}`, userId: '5123456' });
        out.push(`${r.body.status}`);
      }
      const l = sb.admin.ledger();
      return out.join(',') + '|' + l.orders.map((o) => `${o.settleAt === null ? '-' : Date.parse(o.settleAt as string) - Date.parse(o.createdAt as string)}`).join(',');
    };
    const a = await fates(7);
    expect(await fates(7)).toBe(a);
    expect(await fates(8)).not.toBe(a);
    expect(a).toContain('processing');
    expect(a).toContain('completed');
  });
});

describe('§4.5 rule 1 idempotency', () => {
  it('§4.5 rule 1: the same trxid again returns the existing order with idempotentReplay, no second charge', async () => {
    const sb = await start();
    const t = trx();
    const first = await order(sb, { pid: 'PUBG-660', trxid: t, userId: '5123456' });
    const again = await order(sb, { pid: 'PUBG-660', trxid: t, userId: '5123456' });
    const different = await order(sb, { pid: 'PUBG-8100', trxid: t, userId: '7777777' });
    expect(again).toMatchObject({ status: 200, body: { orderId: first.body.orderId, idempotentReplay: true, amountUsd: 9.1 } });
    expect(different.body).toMatchObject({ orderId: first.body.orderId, idempotentReplay: true, pid: 'PUBG-660' });
    expect((await get(sb, '/balance')).body.balanceUsd).toBeCloseTo(1000 - 9.1, 6);
    expect(sb.admin.ledger().entries.filter((e) => e.kind === 'charge')).toHaveLength(1);
  });

  it('§4.5 idempotencyKey (alias idempotency), when given, is the key instead of trxid', async () => {
    const sb = await start();
    const a = await order(sb, { pid: 'PUBG-60', trxid: trx(), idempotencyKey: 'IK-1', userId: '5123456' });
    const b = await order(sb, { pid: 'PUBG-60', trxid: trx(), idempotency: 'IK-1', userId: '5123456' });
    expect(b.body).toMatchObject({ orderId: a.body.orderId, idempotentReplay: true });
    const t = trx();
    const c = await order(sb, { pid: 'PUBG-60', trxid: t, idempotencyKey: 'IK-2', userId: '5123456' });
    const d = await order(sb, { pid: 'PUBG-60', trxid: t, idempotencyKey: 'IK-3', userId: '5123456' });
    expect(d.body.orderId).not.toBe(c.body.orderId);
  });

  it('§7 FORBIDDEN: a trxid tied to another account is 403 and charges nothing', async () => {
    const sb = await start({ accounts: [{ apiKey: OTHER_KEY, balanceUsd: 50 }] });
    const t = trx();
    await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' });
    const r = await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' }, OTHER_KEY);
    expect(r).toMatchObject({ status: 403, body: { success: false, code: 'FORBIDDEN', error: 'FORBIDDEN' } });
    expect((await get(sb, '/balance', OTHER_KEY)).body.balanceUsd).toBe(50);
  });

  it('§8 DUPLICATE_IN_FLIGHT: a resubmit while the first (slow) submit has not answered is 429', async () => {
    const sb = await start({ faults: { slowShare: 1, slowMs: 400 } });
    const t = trx();
    const first = order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' });
    await new Promise((r) => setTimeout(r, 100));
    const second = await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' });
    expect(second).toMatchObject({ status: 429, body: { success: false, code: 'DUPLICATE_IN_FLIGHT', error: 'DUPLICATE_IN_FLIGHT' } });
    const done = await first;
    expect(done.status).toBe(200);
    expect(done.body.idempotentReplay).toBeUndefined();
    const third = await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' });
    expect(third.body).toMatchObject({ orderId: done.body.orderId, idempotentReplay: true });
    expect(sb.admin.ledger().entries).toHaveLength(1);
  });

  it('fault lostResponse: the fetch fails, yet the order exists and a resubmit replays it', async () => {
    const sb = await start({ faults: { lostResponseShare: 1 } });
    const t = trx();
    await expect(order(sb, { pid: 'PUBG-325', trxid: t, userId: '5123456' })).rejects.toThrow();
    expect(sb.admin.ledger().orders).toHaveLength(1);
    const replay = await order(sb, { pid: 'PUBG-325', trxid: t, userId: '5123456' });
    expect(replay).toMatchObject({ status: 200, body: { idempotentReplay: true, trxid: t } });
    expect((await get(sb, '/balance')).body.balanceUsd).toBeCloseTo(1000 - 4.55, 6);
  });

  it('fault error5xxAfter: 500 although the order was created; error5xxBefore: 500 and nothing created', async () => {
    const sb = await start({ faults: { error5xxAfterShare: 1 } });
    const t = trx();
    expect((await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' })).status).toBe(500);
    expect(sb.admin.ledger().orders).toHaveLength(1);
    sb.admin.setFaults({ error5xxAfterShare: 0, error5xxBeforeShare: 1 });
    expect((await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' })).status).toBe(500);
    expect(sb.admin.ledger().orders).toHaveLength(1);
    sb.admin.setFaults({ error5xxBeforeShare: 0 });
    expect((await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' })).body.idempotentReplay).toBe(true);
  });

  it('fault validateBeforeIdempotency: a 400 on a resubmit is no proof that nothing was charged', async () => {
    const sb = await start();
    const t = trx();
    const placed = await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' });
    sb.admin.setProduct({ id: 'PUBG-60', status: 'inactive' });
    // Default order: lookup first, so the replay still answers.
    expect((await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' })).body.idempotentReplay).toBe(true);
    await admin(sb, 'POST', 'faults', { validateBeforeIdempotency: true });
    const r = await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' });
    expect(r).toMatchObject({ status: 400, body: { code: 'PRODUCT_DISABLED' } });
    expect(sb.admin.ledger().orders.map((o) => o.orderId)).toEqual([placed.body.orderId]);
  });
});

describe('persistence', () => {
  it('stateFile: orders, balances, ledger and stock survive a restart; processing orders settle after it', async () => {
    const stateFile = join(dir, 'state.sqlite');
    const clock = manualClock();
    const opts = { apiKey: KEY, stateFile, now: clock.now, rateLimits: [{ limit: 1000, windowMs: 1000 }] };
    const a = await startSandbox({ ...opts, fulfilment: { processingShare: 1, failShare: 0, processingMs: [5000, 5000] } });
    const t = trx();
    const p = await order(a, { pid: 'PUBG-660', trxid: t, userId: 'fail-me' });
    const k = await order(a, { pid: 'KEY-PUBG-660', trxid: trx(), quantity: 2 });
    expect(p.body.status).toBe('processing');
    await a.close();

    clock.advance(6000);
    const b = await startSandbox({ ...opts, balanceUsd: 5 }); // options do not overwrite a stored account
    try {
      expect((await get(b, `/orders/${k.body.orderId}`)).body.codes).toEqual(k.body.codes);
      expect((await get(b, `/orders/${p.body.orderId}`)).body).toMatchObject({ status: 'cancelled', refunded: true });
      expect((await get(b, '/balance')).body.balanceUsd).toBeCloseTo(1000 - 2 * 9, 6);
      expect((await order(b, { pid: 'PUBG-660', trxid: t, userId: 'x' })).body).toMatchObject({ idempotentReplay: true, orderId: p.body.orderId });
      expect(b.admin.ledger().entries.map((e) => e.kind)).toEqual(['charge', 'charge', 'refund']);
      expect((await get(b, '/products')).body.products.find((x: any) => x.id === 'KEY-PUBG-660').quantity).toBe(1);
      const next = await order(b, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' });
      expect(next.body.orderId).not.toBe(p.body.orderId);
    } finally {
      await b.close();
    }
  });
});

describe('sandbox admin routes', () => {
  it('admin: topup and set balance write ledger entries; product stock; account create; rate-limits', async () => {
    const sb = await start();
    expect((await admin(sb, 'POST', 'topup', { amountUsd: 25 })).body).toMatchObject({ success: true, balanceUsd: 1025 });
    expect((await admin(sb, 'POST', 'balance', { balanceUsd: 10 })).body.balanceUsd).toBe(10);
    expect((await get(sb, '/balance')).body.balanceUsd).toBe(10);
    expect(sb.admin.ledger().entries.map((e) => [e.kind, e.amountUsd])).toEqual([['topup', 25], ['topup', -1015]]);
    expect((await admin(sb, 'POST', 'product', { id: 'STEAM-50', stock: 7 })).body.product).toMatchObject({ quantity: 7, inStock: true });
    expect((await admin(sb, 'POST', 'product', { id: 'NOPE' })).status).toBe(404);
    expect((await admin(sb, 'POST', 'account', { apiKey: 'brand-new-key', state: 'active' })).status).toBe(200);
    expect((await get(sb, '/balance', 'brand-new-key')).body.balanceUsd).toBe(0);
    expect((await admin(sb, 'POST', 'fulfilment', { processingShare: 2 })).status).toBe(400);
    expect((await admin(sb, 'POST', 'rate-limits', [{ limit: 5, windowMs: 1000 }])).body.rateLimits).toEqual([{ limit: 5, windowMs: 1000 }]);
    expect((await admin(sb, 'GET', 'nope')).status).toBe(404);
    expect((await admin(sb, 'GET', 'calls')).body.calls.length).toBeGreaterThan(0);
    expect((await admin(sb, 'POST', 'reset-calls')).status).toBe(200);
    expect((await admin(sb, 'GET', 'calls')).body.calls).toEqual([]);
  });

  it('fault blackhole: public requests are never answered; admin still answers', async () => {
    const sb = await start({ faults: { blackhole: true } });
    await expect(fetch(`${sb.url}/balance`, { headers: { 'x-api-key': KEY }, signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect((await admin(sb, 'POST', 'faults', { blackhole: false })).status).toBe(200);
    expect((await get(sb, '/balance')).status).toBe(200);
  });
});

describe('§4.5 idempotency before validation', () => {
  it('§4.5 rule 1: a resubmit whose body now has a wrong-typed field still replays (lookup comes first)', async () => {
    const sb = await start();
    const t = trx();
    const placed = await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456' });
    const r = await order(sb, { pid: 'PUBG-60', trxid: t, userId: '5123456', quantity: 'lots' });
    expect(r.body).toMatchObject({ idempotentReplay: true, orderId: placed.body.orderId });
  });
});
