import { describe, expect, it } from 'vitest';
import { call, get, KEY, order, OTHER_KEY, start, trx } from './helpers.js';

describe('read endpoints', () => {
  it('§4.1 GET /services lists active lines with required fields and {value,label} options', async () => {
    const sb = await start();
    const r = await get(sb, '/services');
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    const slugs = r.body.services.map((s: any) => s.slug);
    for (const s of ['pubg', 'pubgsubscription', 'pubgucspecial', 'pubgcncn', 'ffmena', 'ffcis', 'ffbd', 'fflatam',
      'mobilelegends', 'wutheringwaves', 'identityv', 'oncehuman', 'valorant', 'gamekeypubg', 'steamgiftcard']) {
      expect(slugs).toContain(s);
    }
    expect(slugs).not.toContain('genshinimpact'); // §2.1 unavailable games are not listed
    const oh = r.body.services.find((s: any) => s.slug === 'oncehuman');
    expect(oh.required.map((f: any) => f.field)).toEqual(['userId', 'region', 'moreId']);
    expect(oh.regionOptions).toContainEqual({ value: 'Europe', label: 'Europe' });
    expect(oh.serverIdOptions).toBeUndefined();
    const ww = r.body.services.find((s: any) => s.slug === 'wutheringwaves');
    expect(ww.serverIdOptions.length).toBeGreaterThan(1);
    expect(r.body.services.every((s: any) => s.status === 'active')).toBe(true);
  });

  it('§4.2 GET /products and GET /catalog return the same payload, one row per active pack', async () => {
    const sb = await start();
    const a = await get(sb, '/products');
    const b = await get(sb, '/catalog');
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    const ids = a.body.products.map((p: any) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain('PRIME-LEGACY');
    expect(ids).not.toContain('GI-60');
    expect(new Set(a.body.products.map((p: any) => p.category))).toEqual(new Set(['topup', 'subscription', 'gamekey', 'giftcard']));
    const pubg = a.body.products.find((p: any) => p.id === 'PUBG-60');
    expect(pubg).toMatchObject({ slug: 'pubg', category: 'topup', status: 'active', price: 0.92 });
    expect(pubg.quantity).toBeUndefined();
    expect(a.body.products.find((p: any) => p.id === 'KEY-PUBG-660'))
      .toMatchObject({ quantity: 3, inStock: true, quantityMin: 1, quantityMax: 3 });
    expect(a.body.products.find((p: any) => p.id === 'KEY-PUBG-60')).toMatchObject({ quantity: 1200, quantityMax: 500 });
    expect(a.body.products.find((p: any) => p.id === 'STEAM-50')).toMatchObject({ quantity: 0, inStock: false });
  });

  it('§1 fixed-PID packs: subscriptions, CN web and card-purchase UC packs are all in the catalog', async () => {
    const sb = await start();
    const products = (await get(sb, '/products')).body.products as any[];
    const names = (slug: string) => products.filter((p) => p.slug === slug).map((p) => p.serviceName);
    expect(names('pubgsubscription')).toEqual(expect.arrayContaining(['PRIME 1 month', 'PRIMEPLUS 12 months',
      'FIRST PURCHASE PACK', 'MATERIAL PACK', 'MYTHIC EMBLEM PACK', 'WEEKLY EMBLEM']));
    expect(names('pubgcncn')).toHaveLength(6);
    expect(names('pubgucspecial')).toHaveLength(10);
    expect(products.filter((p) => p.slug === 'pubgsubscription').every((p) => p.category === 'subscription')).toBe(true);
  });

  it('§4.3 GET /my-ip answers the caller address in IPv4 form', async () => {
    const sb = await start();
    expect((await get(sb, '/my-ip')).body).toEqual({ success: true, ip: '127.0.0.1' });
  });

  it('§4.4 GET /balance answers balanceUsd and currency USD', async () => {
    const sb = await start({ balanceUsd: 12.34 });
    expect((await get(sb, '/balance')).body).toEqual({ success: true, balanceUsd: 12.34, currency: 'USD' });
  });

  it('§4.6 GET /orders/:orderId answers the order; unknown or another account\'s id is ORDER NOT FOUND', async () => {
    const sb = await start({ accounts: [{ apiKey: OTHER_KEY }] });
    const placed = await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '51234567' });
    const r = await get(sb, `/orders/${placed.body.orderId}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ orderId: placed.body.orderId, status: 'completed', game: 'pubg', orderCreated: true });
    expect(r.body.idempotentReplay).toBeUndefined();
    expect(await get(sb, '/orders/ORD999')).toMatchObject({ status: 404, body: { success: false, error: 'ORDER NOT FOUND' } });
    expect(await get(sb, `/orders/${placed.body.orderId}`, OTHER_KEY))
      .toMatchObject({ status: 404, body: { success: false, error: 'ORDER NOT FOUND' } });
  });

  it('§7 501 NOT IMPLEMENTED for unknown paths and methods, after authentication', async () => {
    const sb = await start();
    expect(await get(sb, '/v2/whatever')).toMatchObject({ status: 501, body: { success: false, error: 'NOT IMPLEMENTED' } });
    expect(await call(sb, 'DELETE', '/balance')).toMatchObject({ status: 501 });
    expect(await get(sb, '/v2/whatever', null)).toMatchObject({ status: 401, body: { code: 'MISSING_API_KEY' } });
  });
});

describe('§4.7 GET /history', () => {
  async function withOrders(n: number) {
    let t = Date.UTC(2025, 0, 1);
    const sb = await start({ now: () => t });
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      t += 1000;
      ids.push((await order(sb, { pid: 'PUBG-60', trxid: trx('H'), userId: '51234567' })).body.orderId);
    }
    return { sb, newestFirst: ids.reverse() };
  }

  it('§4.7 simple mode: default 30, newest first, order shape with trxid/pid/createdAt', async () => {
    const { sb, newestFirst } = await withOrders(35);
    const r = await get(sb, '/history');
    expect(r.status).toBe(200);
    expect(r.body.count).toBe(30);
    expect(r.body.orders.map((o: any) => o.orderId)).toEqual(newestFirst.slice(0, 30));
    expect(r.body.total).toBeUndefined();
    expect(r.body.orders[0]).toMatchObject({ orderCreated: true, game: 'pubg', pid: 'PUBG-60' });
    expect(typeof r.body.orders[0].trxid).toBe('string');
    expect(Date.parse(r.body.orders[0].createdAt)).toBeGreaterThan(Date.parse(r.body.orders[1].createdAt));
  });

  it('§4.7 simple mode bounds: limit clamped to 1..200, junk takes the default', async () => {
    const { sb } = await withOrders(5);
    expect((await get(sb, '/history?limit=2')).body.count).toBe(2);
    expect((await get(sb, '/history?limit=0')).body.count).toBe(1);
    expect((await get(sb, '/history?limit=-5')).body.count).toBe(1);
    expect((await get(sb, '/history?limit=999')).body.count).toBe(5);
    expect((await get(sb, '/history?limit=abc')).body.count).toBe(5);
  });

  it('§4.7 simple mode max 200', async () => {
    const { sb } = await withOrders(205);
    expect((await get(sb, '/history?limit=500')).body.count).toBe(200);
  });

  it('§4.7 paged mode: page starts at 1, pageSize default 20, max 50, min 1; total and hasMore', async () => {
    const { sb, newestFirst } = await withOrders(55);
    const p1 = (await get(sb, '/history?page=1')).body;
    expect(p1).toMatchObject({ success: true, count: 20, total: 55, hasMore: true });
    expect(p1.orders[0].orderId).toBe(newestFirst[0]);
    const p3 = (await get(sb, '/history?page=3')).body;
    expect(p3).toMatchObject({ count: 15, total: 55, hasMore: false });
    expect(p3.orders.map((o: any) => o.orderId)).toEqual(newestFirst.slice(40));
    expect((await get(sb, '/history?page=1&pageSize=100')).body).toMatchObject({ count: 50, hasMore: true });
    expect((await get(sb, '/history?page=2&pageSize=50')).body).toMatchObject({ count: 5, hasMore: false });
    expect((await get(sb, '/history?page=0&pageSize=0')).body).toMatchObject({ count: 1, hasMore: true });
    expect((await get(sb, '/history?page=0&pageSize=0')).body.orders[0].orderId).toBe(newestFirst[0]);
    expect((await get(sb, '/history?page=9')).body).toMatchObject({ count: 0, total: 55, hasMore: false });
  });

  it('§4.7 history shows only the caller\'s orders', async () => {
    const sb = await start({ accounts: [{ apiKey: 'other-key-1' }] });
    await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '51234567' });
    expect((await get(sb, '/history', 'other-key-1')).body).toMatchObject({ count: 0, orders: [] });
    expect((await get(sb, '/history', KEY)).body.count).toBe(1);
  });
});

describe('--catalog FILE', () => {
  it('§2 an exported catalog replaces the default; bare-string options become {value,label}; stock optional', async () => {
    const catalogFile = new URL('../fixtures/sandbox/catalog.json', import.meta.url).pathname;
    const sb = await start({ catalogFile });
    const services = (await get(sb, '/services')).body.services;
    expect(services.map((s: any) => s.slug)).toEqual(['testgame', 'testcard']);
    expect(services[0].serverIdOptions).toEqual([{ value: 'S1', label: 'S1' }, { value: 'S2', label: 'S2' }]);
    const products = (await get(sb, '/products')).body.products;
    expect(products.map((p: any) => p.id)).toEqual(['101', 'CARD-1', 'CARD-2']);
    expect(products[1]).toMatchObject({ quantity: 1000, quantityMax: 500, inStock: true });
    expect(products[2]).toMatchObject({ quantity: 2, quantityMax: 2 });
    expect((await order(sb, { pid: 101, trxid: trx(), userId: 'abc', serverId: 'S2' })).body).toMatchObject({ status: 'completed', serverId: 'S2' });
    expect((await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' })).body.error).toBe('UNKNOWN PID');
  });
});
