import { describe, expect, it } from 'vitest';
import { call, get, order, start, trx } from './helpers.js';

const bad = (error: string) => ({ status: 400, body: { success: false, error } });

describe('§4.5 POST /orders: order shapes of §1', () => {
  it('§1 Player ID shape: pubg with userId completes and echoes the fields', async () => {
    const sb = await start();
    const t = trx();
    const r = await order(sb, { pid: 'PUBG-325', trxid: t, userId: '5123456789' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ orderCreated: true, status: 'completed', game: 'pubg', packName: '325 UC',
      amountUsd: 4.55, userId: '5123456789', trxid: t, pid: 'PUBG-325', durationSec: 0 });
    expect(r.body.orderId).toMatch(/^ORD\d+$/);
    expect(r.body.codes).toBeUndefined();
  });

  it('§4.5 body aliases PID, trxId/idtrx/idTrx, userID are accepted', async () => {
    const sb = await start();
    for (const alias of ['trxId', 'idtrx', 'idTrx']) {
      const t = trx(alias);
      const r = await order(sb, { PID: 'PRIME-1M', [alias]: t, userID: '5123456789' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ trxid: t, pid: 'PRIME-1M', userId: '5123456789', game: 'pubgsubscription' });
    }
  });

  it('§1 ff* lines: userId must be 5–20 digits, else INVALID REQUEST with nothing created', async () => {
    const sb = await start();
    for (const slugPid of ['FFMENA-100', 'FFCIS-100', 'FFBD-100', 'FFLATAM-100']) {
      expect((await order(sb, { pid: slugPid, trxid: trx(), userId: '12345' })).status).toBe(200);
      expect((await order(sb, { pid: slugPid, trxid: trx(), userId: '123456789012345678901' })).status).toBe(400);
    }
    expect(await order(sb, { pid: 'FFMENA-100', trxid: trx(), userId: '1234' })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'FFMENA-100', trxid: trx(), userId: 'abc12345' })).toMatchObject(bad('INVALID REQUEST'));
    expect(sb.admin.ledger().orders).toHaveLength(4);
  });

  it('§1 ML-style: userId + numeric zoneId; missing or non-numeric zone is INVALID REQUEST', async () => {
    const sb = await start();
    expect((await order(sb, { pid: 'ML-86', trxid: trx(), userId: '12345678', zoneId: '2001' })).status).toBe(200);
    expect((await order(sb, { pid: 'ML-86', trxid: trx(), userId: '12345678', zoneId: 2001 })).status).toBe(200);
    expect(await order(sb, { pid: 'ML-86', trxid: trx(), userId: '12345678' })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'ML-86', trxid: trx(), userId: '12345678', zoneId: 'eu1' })).toMatchObject(bad('INVALID REQUEST'));
  });

  it('§1 UID + server: serverId from serverIdOptions; missing → INVALID REQUEST; unknown → INVALID PACK', async () => {
    const sb = await start();
    const r = await order(sb, { pid: 'WW-60', trxid: trx(), userId: '800123456', serverId: 'europe' });
    expect(r.body).toMatchObject({ status: 'completed', serverId: 'Europe', game: 'wutheringwaves' });
    expect((await order(sb, { pid: 'IDV-60', trxid: trx(), userId: '800123', serverId: 'NA-EU' })).status).toBe(200);
    expect(await order(sb, { pid: 'WW-60', trxid: trx(), userId: '800123456' })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'WW-60', trxid: trx(), userId: '800123456', serverId: 'Mars' })).toMatchObject(bad('INVALID PACK'));
  });

  it('§4.5 rule 4: Once Human echoes the region in serverId and the server id in moreId; region shortcuts work', async () => {
    const sb = await start();
    const a = await order(sb, { pid: 'OH-60', trxid: trx(), userId: '7001234', region: 'Europe', moreId: '1024' });
    expect(a.body).toMatchObject({ status: 'completed', serverId: 'Europe', moreId: '1024', game: 'oncehuman' });
    const b = await order(sb, { pid: 'OH-60', trxid: trx(), userId: '7001234', serverId: 'na', moreId: '77' });
    expect(b.body).toMatchObject({ serverId: 'North America', moreId: '77' });
    const c = await order(sb, { pid: 'OH-60', trxid: trx(), userId: '7001234', region: 'eu', moreId: '5' });
    expect(c.body.serverId).toBe('Europe');
    expect(await order(sb, { pid: 'OH-60', trxid: trx(), userId: '7001234', region: 'Europe' })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'OH-60', trxid: trx(), userId: '7001234', moreId: '5' })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'OH-60', trxid: trx(), userId: '7001234', region: 'Narnia', moreId: '5' })).toMatchObject(bad('INVALID PACK'));
  });

  it('§1 Riot ID: userId must be name#tag', async () => {
    const sb = await start();
    expect((await order(sb, { pid: 'VAL-475', trxid: trx(), userId: 'Player One#EUW1' })).status).toBe(200);
    expect(await order(sb, { pid: 'VAL-475', trxid: trx(), userId: 'PlayerOne' })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'VAL-475', trxid: trx(), userId: 'Player#' })).toMatchObject(bad('INVALID REQUEST'));
  });

  it('§1 Keys/cards: quantity codes like PUBG-XXXX-XXXX-XXXX, charged price × quantity, stock taken', async () => {
    const sb = await start();
    const r = await order(sb, { pid: 'KEY-PUBG-60', trxid: trx(), quantity: 3 });
    expect(r.body).toMatchObject({ status: 'completed', game: 'gamekeypubg', amountUsd: 2.7 });
    expect(r.body.codes).toHaveLength(3);
    for (const c of r.body.codes) expect(c).toMatch(/^PUBG-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(new Set(r.body.codes).size).toBe(3);
    const one = await order(sb, { pid: 'STEAM-5', trxid: trx() });
    expect(one.body.codes).toHaveLength(1);
    const p = (await get(sb, '/products')).body.products.find((x: any) => x.id === 'KEY-PUBG-60');
    expect(p).toMatchObject({ quantity: 1197, quantityMax: 500, inStock: true });
  });
});

describe('§4.5 / §7 POST /orders rejections', () => {
  it('§7 INVALID BODY: body not an object, wrong types, quantity not a positive integer', async () => {
    const sb = await start();
    for (const body of [[1, 2], 'text', 42, null]) {
      expect(await call(sb, 'POST', '/orders', body)).toMatchObject(bad('INVALID BODY'));
    }
    const t = trx();
    for (const body of [
      { pid: 'PUBG-60', trxid: t, userId: { id: 1 } },
      { pid: ['PUBG-60'], trxid: t, userId: '5123456' },
      { pid: 'KEY-PUBG-60', trxid: t, quantity: 1.5 },
      { pid: 'KEY-PUBG-60', trxid: t, quantity: '2' },
      { pid: 'KEY-PUBG-60', trxid: t, quantity: 0 },
      { pid: 'KEY-PUBG-60', trxid: t, quantity: -3 },
      { pid: 'PUBG-60', trxid: true, userId: '5123456' },
    ]) {
      expect(await order(sb, body)).toMatchObject(bad('INVALID BODY'));
    }
  });

  it('§7 INVALID REQUEST: pid, trxid or userId missing where required', async () => {
    const sb = await start();
    expect(await order(sb, { trxid: trx(), userId: '5123456' })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'PUBG-60', userId: '5123456' })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'PUBG-60', trxid: trx() })).toMatchObject(bad('INVALID REQUEST'));
    expect(await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '   ' })).toMatchObject(bad('INVALID REQUEST'));
  });

  it('§7 UNKNOWN PID, GAME DISABLED, PRODUCT_DISABLED', async () => {
    const sb = await start();
    expect(await order(sb, { pid: 'NOPE-1', trxid: trx(), userId: '5123456' })).toMatchObject(bad('UNKNOWN PID'));
    expect(await order(sb, { pid: 'GI-60', trxid: trx(), userId: '800123', serverId: 'Europe' })).toMatchObject(bad('GAME DISABLED'));
    expect(await order(sb, { pid: 'PRIME-LEGACY', trxid: trx(), userId: '5123456' }))
      .toMatchObject({ status: 400, body: { success: false, code: 'PRODUCT_DISABLED' } });
    sb.admin.setProduct({ id: 'PUBG-60', status: 'inactive' });
    expect(await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' })).toMatchObject({ body: { code: 'PRODUCT_DISABLED' } });
    expect((await get(sb, '/products')).body.products.map((p: any) => p.id)).not.toContain('PUBG-60');
  });

  it('§4.5 rule 3: quantity on a top-up line is QUANTITY ONLY FOR GAMEKEY OR GIFTCARD', async () => {
    const sb = await start();
    expect(await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456', quantity: 1 }))
      .toMatchObject(bad('QUANTITY ONLY FOR GAMEKEY OR GIFTCARD'));
  });

  it('§4.5 rule 2: quantity over 500 is rejected, never capped', async () => {
    const sb = await start();
    const r = await order(sb, { pid: 'KEY-PUBG-60', trxid: trx(), quantity: 501 });
    expect(r).toMatchObject({ status: 400, body: { success: false, code: 'QUANTITY_EXCEEDS_MAX', error: 'QUANTITY EXCEEDS MAX' } });
    expect(sb.admin.ledger().orders).toHaveLength(0);
    expect((await order(sb, { pid: 'KEY-PUBG-60', trxid: trx(), quantity: 500 })).body.codes).toHaveLength(500);
  });

  it('§7 insufficient stock: {orderCreated:false, status:cancelled, game, error}, nothing taken', async () => {
    const sb = await start();
    const out = await order(sb, { pid: 'STEAM-50', trxid: trx(), quantity: 1 });
    expect(out).toMatchObject({ status: 400, body: { orderCreated: false, status: 'cancelled', game: 'steamgiftcard', error: 'INSUFFICIENT STOCK' } });
    expect(await order(sb, { pid: 'KEY-PUBG-660', trxid: trx(), quantity: 4 })).toMatchObject({ body: { error: 'INSUFFICIENT STOCK' } });
    expect((await order(sb, { pid: 'KEY-PUBG-660', trxid: trx(), quantity: 3 })).status).toBe(200);
    const p = (await get(sb, '/products')).body.products.find((x: any) => x.id === 'KEY-PUBG-660');
    expect(p).toMatchObject({ quantity: 0, inStock: false, quantityMax: 0 });
    expect((await get(sb, '/balance')).body.balanceUsd).toBeCloseTo(1000 - 27, 6);
  });

  it('§3 rejected at submit (INSUFFICIENT BALANCE): no order, no charge, the trxid stays free', async () => {
    const sb = await start({ balanceUsd: 5 });
    const t = trx();
    const r = await order(sb, { pid: 'PUBG-660', trxid: t, userId: '5123456' });
    expect(r).toMatchObject({ status: 400, body: { orderCreated: false, status: 'cancelled', game: 'pubg', error: 'INSUFFICIENT BALANCE' } });
    expect(r.body.orderId).toBeUndefined();
    expect((await get(sb, '/balance')).body.balanceUsd).toBe(5);
    expect((await get(sb, '/history')).body.count).toBe(0);
    sb.admin.topup({ amountUsd: 10 });
    const again = await order(sb, { pid: 'PUBG-660', trxid: t, userId: '5123456' });
    expect(again.status).toBe(200);
    expect(again.body.idempotentReplay).toBeUndefined();
    expect((await get(sb, '/balance')).body.balanceUsd).toBeCloseTo(15 - 9.1, 6);
  });

  it('§4.5 an order costing exactly the balance is accepted', async () => {
    const sb = await start({ balanceUsd: 0.92 });
    expect((await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' })).status).toBe(200);
    expect((await get(sb, '/balance')).body.balanceUsd).toBe(0);
  });

  it('§2.2 admin price override is what the catalog shows and what the order charges', async () => {
    const sb = await start();
    sb.admin.setProduct({ id: 'PUBG-60', price: 1.11 });
    expect((await get(sb, '/products')).body.products.find((p: any) => p.id === 'PUBG-60').price).toBe(1.11);
    expect((await order(sb, { pid: 'PUBG-60', trxid: trx(), userId: '5123456' })).body.amountUsd).toBe(1.11);
  });
});
