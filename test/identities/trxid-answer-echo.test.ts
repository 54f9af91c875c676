/**
 * An answer's echo of the trxid is read under the one list of its names (src/kernel/identity.ts
 * TRXID_ANSWER_KEYS; issue 29, "every identity declared once"). It was read under the spec's four
 * names only. A backend that names the order `order_id` (which api/order-id.ts reads) names the
 * trxid `trx_id`: an answer to our POST that carries ANOTHER purchase's order (a cache mixing
 * answers, a replay of somebody else's trxid) with the same player and pack was read as naming no
 * trxid, and completed the row with an order it did not buy. Real client and sender, the real store
 * in a temp home, a scripted supplier on 127.0.0.1.
 *
 * Fails on main: the row is `placed` (processing, ORD-90), not in review.
 */
import { describe, expect, it } from 'vitest';
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

