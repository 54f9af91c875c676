/** §2, §3, §4: every endpoint through ResellerClient, both auth headers, states, replay, history bounds. */
import { describe, expect, it } from 'vitest';
import { manualClock } from '../sandbox/helpers.js';
import { apiFailure, client, KEY, money, sandbox, setup, trx } from './helpers.js';

describe('§4 endpoints through the client', () => {
  it('§4.1 GET /services: lines with productName, slug, gameName, required, status; inactive lines not listed', async () => {
    const { api } = await setup();
    const lines = await api.services();
    expect(lines.length).toBeGreaterThan(5);
    for (const l of lines) {
      expect(l).toMatchObject({ productName: expect.any(String), slug: expect.any(String), gameName: expect.any(String), status: 'active' });
      expect(Array.isArray(l.required)).toBe(true);
    }
    expect(lines.map((l) => l.slug)).toContain('pubg');
    expect(lines.map((l) => l.slug)).not.toContain('genshinimpact');
    const ww = lines.find((l) => l.slug === 'wutheringwaves');
    expect(ww?.serverIdOptions).toContainEqual({ value: 'Europe', label: 'Europe' });
    expect(ww?.required.map((r) => r.field)).toEqual(['userId', 'serverId']);
    expect(lines.find((l) => l.slug === 'oncehuman')?.regionOptions?.length).toBeGreaterThan(0);
    expect(lines.find((l) => l.slug === 'pubg')).not.toHaveProperty('serverIdOptions');
  });

  it('§4.2 GET /products: one row per active pack; stock fields on key/card packs, quantityMax capped by stock and 500', async () => {
    const { api } = await setup();
    const products = await api.products();
    expect(products.every((p) => p.status === 'active')).toBe(true);
    const ids = products.map((p) => p.id);
    expect(ids).toContain('PUBG-60');
    expect(ids).not.toContain('PRIME-LEGACY'); // inactive pack
    expect(ids).not.toContain('GI-60'); // pack on an inactive line
    expect(products.find((p) => p.id === 'PUBG-60')).toMatchObject({ slug: 'pubg', price: 0.92, category: 'topup' });
    expect(products.find((p) => p.id === 'PUBG-60')).not.toHaveProperty('quantity');
    expect(products.find((p) => p.id === 'KEY-PUBG-60')).toMatchObject({ quantity: 1200, inStock: true, quantityMin: 1, quantityMax: 500 });
    expect(products.find((p) => p.id === 'KEY-PUBG-660')).toMatchObject({ quantity: 3, quantityMax: 3 });
    expect(products.find((p) => p.id === 'STEAM-50')).toMatchObject({ quantity: 0, inStock: false });
  });

  it('§4.2 GET /catalog is an alias of /products: the same payload', async () => {
    const { api, sb } = await setup();
    const [a, b] = [await api.products(), await api.catalog()];
    expect(b).toEqual(a);
    expect(sb.admin.calls().map((c) => c.route)).toEqual(['GET /products', 'GET /catalog']);
  });

  it('§4.3 GET /my-ip: the caller address as the service sees it', async () => {
    const { api } = await setup();
    expect(await api.myIp()).toBe('127.0.0.1');
  });

  it('§4.4 / §2.4 GET /balance: { success, balanceUsd, currency: USD }, read-only', async () => {
    const { api } = await setup({ balanceUsd: 12.34 });
    expect(await api.balance()).toMatchObject({ balanceUsd: 12.34, currency: 'USD' });
  });

  it('§4.5 POST /orders: instant top-up → 200 orderCreated, completed; charged once', async () => {
    const { api, sb } = await setup({ balanceUsd: 10 });
    const t = trx();
    const o = await api.submitOrder({ pid: 'PUBG-60', trxid: t, userId: '5123456' });
    expect(o).toMatchObject({ orderCreated: true, status: 'completed', game: 'pubg', packName: '60 UC', amountUsd: 0.92, userId: '5123456', trxid: t });
    expect(o.orderId).toMatch(/^ORD\d+$/);
    expect(o.idempotentReplay).toBeUndefined();
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
    expect((await api.balance()).balanceUsd).toBeCloseTo(9.08, 6);
  });

  it('§4.5 POST /orders: game key with quantity → completed with one code per unit', async () => {
    const { api } = await setup();
    const o = await api.submitOrder({ pid: 'KEY-PUBG-60', trxid: trx(), quantity: 3 });
    expect(o).toMatchObject({ orderCreated: true, status: 'completed', amountUsd: 2.7 });
    expect(o.codes).toHaveLength(3);
  });

  it('§4.5 rule 4 / §1 region + server shape: Once Human echoes the region in serverId and the server in moreId', async () => {
    const { api } = await setup();
    const o = await api.submitOrder({ pid: 'OH-60', trxid: trx(), userId: '778899', region: 'Europe', moreId: 'S-42' });
    expect(o).toMatchObject({ status: 'completed', serverId: 'Europe', moreId: 'S-42' });
  });

  it('§4.6 GET /orders/:orderId returns the order with its current status', async () => {
    const { api } = await setup();
    const placed = await api.submitOrder({ pid: 'PUBG-325', trxid: trx(), userId: '5123456' });
    const got = await api.getOrder(placed.orderId);
    expect(got).toMatchObject({ orderId: placed.orderId, status: 'completed', orderCreated: true, amountUsd: 4.55 });
  });
});

describe('§5.1 authentication headers', () => {
  it('§5.1 X-API-Key (default auth) is accepted', async () => {
    const { api } = await setup();
    expect((await api.balance()).currency).toBe('USD');
  });

  it("§5.1 Authorization: Bearer (auth: 'bearer') is accepted", async () => {
    const sb = await sandbox();
    const api = client(sb, { auth: 'bearer' });
    expect((await api.balance()).currency).toBe('USD');
    expect(await api.submitOrder({ pid: 'PUBG-60', trxid: trx(), userId: '5123456' })).toMatchObject({ status: 'completed' });
  });

  it("§5.1 the bearer header carries the configured key (a wrong key → 401 INVALID_API_KEY)", async () => {
    const sb = await sandbox();
    const e = await apiFailure(client(sb, { auth: 'bearer', apiKey: 'wrong-key-but-well-formed' }).balance(), 'account');
    expect(e).toMatchObject({ status: 401, apiCode: 'INVALID_API_KEY' });
  });
});

describe('§3 states and transitions through the client', () => {
  it('§3 (none) → processing: accepted, fulfilment in progress; polling sees completed once it finishes', async () => {
    const clock = manualClock();
    const { api } = await setup({ now: clock.now, fulfilment: { processingShare: 1, processingMs: [3000, 3000] } });
    const o = await api.submitOrder({ pid: 'PUBG-60', trxid: trx(), userId: '5123456' });
    expect(o).toMatchObject({ orderCreated: true, status: 'processing' });
    clock.advance(2999);
    expect((await api.getOrder(o.orderId)).status).toBe('processing');
    clock.advance(1);
    expect(await api.getOrder(o.orderId)).toMatchObject({ status: 'completed', durationSec: 3 });
  });

  it('§3 processing → cancelled after placement: error set, refunded true, money back', async () => {
    const clock = manualClock();
    const { api, sb } = await setup({ now: clock.now, balanceUsd: 10, fulfilment: { processingMs: [2000, 2000] } });
    const o = await api.submitOrder({ pid: 'PUBG-60', trxid: trx(), userId: 'will-fail-123' });
    expect(o).toMatchObject({ orderCreated: true, status: 'processing' });
    clock.advance(2000);
    expect(await api.getOrder(o.orderId)).toMatchObject({ orderCreated: true, status: 'cancelled', error: 'INVALID PLAYER', refunded: true });
    expect(money(sb)).toMatchObject({ charges: 1, refunds: 1 });
    expect((await api.balance()).balanceUsd).toBe(10);
  });

  it('§3 / §4.5 rule 1 idempotent replay: same trxid → 200, idempotentReplay true, same order, no second charge', async () => {
    const { api, sb } = await setup({ balanceUsd: 10 });
    const body = { pid: 'PUBG-60', trxid: trx(), userId: '5123456' };
    const first = await api.submitOrder(body);
    const again = await api.submitOrder(body);
    expect(again).toMatchObject({ orderId: first.orderId, status: 'completed', idempotentReplay: true });
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
    expect(sb.admin.ledger().entries.filter((e) => e.kind === 'charge' && e.trxid === body.trxid)).toHaveLength(1);
    expect((await api.balance()).balanceUsd).toBeCloseTo(9.08, 6);
  });

  it('§3 replay leaves a processing order unchanged and reports its current status', async () => {
    const clock = manualClock();
    const { api, sb } = await setup({ now: clock.now, fulfilment: { processingShare: 1, processingMs: [5000, 5000] } });
    const body = { pid: 'PUBG-60', trxid: trx(), userId: '5123456' };
    const first = await api.submitOrder(body);
    expect(await api.submitOrder(body)).toMatchObject({ orderId: first.orderId, status: 'processing', idempotentReplay: true });
    clock.advance(5000);
    expect(await api.submitOrder(body)).toMatchObject({ orderId: first.orderId, status: 'completed', idempotentReplay: true });
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1 });
  });

  it('§3 replay of a cancelled order returns it cancelled with idempotentReplay, no new charge', async () => {
    const clock = manualClock();
    const { api, sb } = await setup({ now: clock.now, fulfilment: { processingMs: [1000, 1000] } });
    const body = { pid: 'PUBG-60', trxid: trx(), userId: 'fail-me' };
    const first = await api.submitOrder(body);
    clock.advance(1000);
    expect(await api.submitOrder(body)).toMatchObject({ orderId: first.orderId, status: 'cancelled', refunded: true, idempotentReplay: true });
    expect(money(sb)).toMatchObject({ orders: 1, charges: 1, refunds: 1 });
  });
});

/** Places `count` orders (newest last) and returns their trxids. */
async function place(api: ReturnType<typeof client>, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => trx('H'));
  for (let i = 0; i < ids.length; i += 25) {
    await Promise.all(ids.slice(i, i + 25).map((t) => api.submitOrder({ pid: 'PUBG-60', trxid: t, userId: '5123456' })));
  }
  return ids;
}

describe('§4.7 / §8 GET /history', () => {
  it('§4.7 simple mode: newest first, count matches, elements have the order shape', async () => {
    const clock = manualClock();
    const { api } = await setup({ now: clock.now });
    const a = await api.submitOrder({ pid: 'PUBG-60', trxid: trx(), userId: '5123456' });
    clock.advance(1000);
    const b = await api.submitOrder({ pid: 'PUBG-325', trxid: trx(), userId: '5123456' });
    const h = await api.history();
    expect(h).toMatchObject({ count: 2 });
    expect(h.orders.map((o) => o.orderId)).toEqual([b.orderId, a.orderId]);
    expect(h.orders[0]).toMatchObject({ orderCreated: true, status: 'completed', packName: '325 UC' });
    expect(h.total).toBeUndefined();
    expect(h.hasMore).toBeUndefined();
  });

  it('§4.7 / §8 simple mode limit: default 30, min 1', async () => {
    const { api } = await setup();
    await place(api, 32);
    expect((await api.history()).count).toBe(30);
    expect((await api.history({ limit: 1 })).count).toBe(1);
    expect((await api.history({ limit: 0 })).count).toBe(1);
    expect((await api.history({ limit: 31 })).orders).toHaveLength(31);
  });

  it('§4.7 / §8 simple mode limit: max 200', async () => {
    const { api } = await setup({ balanceUsd: 1000 });
    await place(api, 203);
    expect((await api.history({ limit: 200 })).count).toBe(200);
    expect((await api.history({ limit: 201 })).count).toBe(200);
    expect((await api.history({ limit: 1000 })).orders).toHaveLength(200);
  });

  it('§4.7 / §8 paged mode: pageSize default 20, total and hasMore, pages do not overlap', async () => {
    const { api } = await setup();
    const placed = await place(api, 45);
    const p1 = await api.history({ page: 1 });
    expect(p1).toMatchObject({ count: 20, total: 45, hasMore: true });
    const p2 = await api.history({ page: 2 });
    const p3 = await api.history({ page: 3 });
    expect(p2).toMatchObject({ count: 20, total: 45, hasMore: true });
    expect(p3).toMatchObject({ count: 5, total: 45, hasMore: false });
    const seen = [...p1.orders, ...p2.orders, ...p3.orders].map((o) => o.trxid);
    expect(new Set(seen).size).toBe(45);
    expect(new Set(seen)).toEqual(new Set(placed));
    expect((await api.history({ page: 4 }))).toMatchObject({ count: 0, total: 45, hasMore: false });
  });

  it('§4.7 / §8 paged mode: pageSize max 50', async () => {
    const { api } = await setup();
    await place(api, 53);
    expect(await api.history({ page: 1, pageSize: 50 })).toMatchObject({ count: 50, total: 53, hasMore: true });
    expect(await api.history({ page: 1, pageSize: 51 })).toMatchObject({ count: 50, total: 53 });
    expect(await api.history({ page: 2, pageSize: 50 })).toMatchObject({ count: 3, hasMore: false });
    expect(await api.history({ page: 1, pageSize: 5 })).toMatchObject({ count: 5, hasMore: true });
  });

  it('§4.7 history is per account: another account sees none of these orders', async () => {
    const sb = await sandbox({ accounts: [{ apiKey: KEY }, { apiKey: 'second-account-key' }] });
    await place(client(sb), 3);
    expect(await client(sb, { apiKey: 'second-account-key' }).history()).toMatchObject({ count: 0, orders: [] });
  });
});
