/**
 * Stop 37's adversarial review of the trxid names declared once (money): an answer's trxid echo is read from the
 * FIRST key of TRXID_ANSWER_KEYS that holds a value (api/read.ts pick), and only under those five
 * spellings. So an answer carrying ANOTHER purchase's trxid is still read as this row's order when
 *  - it names it `trxID` (the spelling of `orderID`, which api/order-id.ts ORDER_ID_KEYS reads), or
 *  - it holds two echoes that disagree: the request's `trxid` (ours) beside the order's own `trx_id`
 *    (another's) — only the first is read, the contradiction is never seen.
 * Either way the row is completed (placed) with an order it did not buy. Same harness as
 * test/identities/trxid-answer-echo.test.ts (real client, sender and store; scripted supplier).
 */
import { describe, expect, it } from 'vitest';
import { readHistory } from '../../src/api/schemas.js';
import { sendRow } from '../../src/dispatch/sender.js';
import type { NewRow } from '../../src/store/rows.js';
import { scriptedWorld, senderDeps } from '../unit/scripted-supplier.js';

const topUp: NewRow = {
  idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-keys', userId: '5123456789' }, error: null,
  productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92,
};

describe('an answer naming another purchase\'s trxid is never this row\'s order', () => {
  it('under `trxID` (as `orderID` names the order)', async () => {
    const w = await scriptedWorld([topUp]);
    w.set(() => ({ body: { success: true, orderID: 'ORD-92', trxID: 'shop-other-17', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789' } }));
    expect(await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('review');
    expect(w.rt.rows.get('b1', 0)!.orderId).toBeNull();
  });

  it('under `trx_id`, beside a `trxid` that echoes ours', async () => {
    const w = await scriptedWorld([topUp]);
    w.set(() => ({ body: { success: true, order_id: 'ORD-93', trxid: 'tu-keys', trx_id: 'shop-other-17', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789' } }));
    expect(await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('review');
    expect(w.rt.rows.get('b1', 0)!.orderId).toBeNull();
  });

  it('a history element naming two trxids proves nothing: it is skipped, so its page proves no absence', () => {
    const skips: string[] = [];
    const h = readHistory({ orders: [
      { orderId: 'ORD-1', trxid: 'tu-keys', trx_id: 'shop-other-17', status: 'completed' },
      { orderId: 'ORD-2', trxid: 'tu-2', trxID: 'TU-2', status: 'completed' },
    ] }, (why) => void skips.push(why));
    expect(h?.skipped).toBe(1);
    expect(h?.orders.map((o) => [o.orderId, o.trxid])).toEqual([['ORD-2', 'tu-2']]);
    expect(skips.join(' ')).toMatch(/two trxids/);
  });
});
