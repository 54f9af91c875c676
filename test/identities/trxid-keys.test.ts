/**
 * The names a trxid goes by, declared once (issue 29, "every identity declared once";
 * src/kernel/identity.ts TRXID_KEYS, TRXID_ANSWER_KEYS). Three lists said it before: the sandbox's
 * supplier reading a request (sandbox/orders.ts), a file's column (intake/columns.ts), an answer's
 * echo (api/schemas.ts readOrder).
 *
 * The money case: an answer's echo was read under the spec's four names only. A backend that names
 * the order `order_id` (which api/order-id.ts reads) names the trxid `trx_id`: an answer to our POST
 * that carries ANOTHER purchase's order (a cache mixing answers, a replay of somebody else's trxid)
 * with the same player and pack was read as naming no trxid, and completed the row with an order it
 * did not buy. Real client and sender, the real store in a temp home, a scripted supplier on
 * 127.0.0.1. Fails on main: the row is `placed` (processing, ORD-90), not in review.
 */
import { describe, expect, it } from 'vitest';
import { readOrder } from '../../src/api/schemas.js';
import { mismatches } from '../../src/dispatch/order-match.js';
import { canonicalField } from '../../src/intake/columns.js';
import { TRXID_ANSWER_KEYS, TRXID_KEYS } from '../../src/kernel/identity.js';
import { readBody } from '../../src/sandbox/orders.js';
import { sendRow } from '../../src/dispatch/sender.js';
import type { NewRow } from '../../src/store/rows.js';
import { scriptedWorld, senderDeps } from '../unit/scripted-supplier.js';

const topUp: NewRow = {
  idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-keys', userId: '5123456789' }, error: null,
  productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92,
};

describe('an answer naming another trxid under `trx_id`', () => {
  it('is not this row\'s order: the row goes to review, holding no order', async () => {
    const w = await scriptedWorld([topUp]);
    w.set(() => ({ body: { success: true, order_id: 'ORD-90', trx_id: 'shop-other-17', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789' } }));
    const result = await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!);
    expect(result).toBe('review');
    const row = w.rt.rows.get('b1', 0)!;
    expect(row.state).toBe('review');
    expect(row.orderId).toBeNull();
    expect(row.error).toMatch(/trxid/);
  });

  it('naming this row\'s own trxid there (any letter case) is its order', async () => {
    const w = await scriptedWorld([topUp]);
    w.set(() => ({ body: { success: true, order_id: 'ORD-91', trx_id: 'TU-KEYS', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789' } }));
    expect(await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('placed');
    expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', orderId: 'ORD-91' });
  });
});

describe('every reader of a trxid reads it under the one list', () => {
  it.each(TRXID_ANSWER_KEYS)('an answer\'s echo under %s', (key) => {
    const order = readOrder({ orderId: 'ORD-1', status: 'completed', [key]: 'ÄB-7' });
    expect(order?.trxid).toBe('ÄB-7');
    // Compared under the one fold (kernel/identity.ts foldTrxid): the same trxid in another case is the row's.
    const row = { trxid: 'äb-7', request: null, productId: null, slug: null, packName: null } as unknown as Parameters<typeof mismatches>[0];
    expect(mismatches(row, order!)).toEqual([]);
  });

  it.each(TRXID_KEYS)('a request to the sandbox\'s supplier, and a file\'s column, under %s', (key) => {
    expect(readBody({ pid: 'PUBG-60', [key]: 'SHOP-1' })).toMatchObject({ trxid: 'SHOP-1' });
    expect(canonicalField(key)).toBe('trxid');
  });

  it('the answer keys are the request keys and the snake case only', () => {
    expect(TRXID_ANSWER_KEYS).toEqual([...TRXID_KEYS, 'trx_id']);
    expect(canonicalField('trx_id')).toBe('trxid');
  });
});
