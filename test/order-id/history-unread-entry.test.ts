/**
 * Review of ident36 (issue 29, "every identity declared once"): the history check (poll/verify.ts)
 * reads "no order in history" as "not placed" once the page is shorter than the limit. But
 * api/schemas.ts readHistory SKIPS every element it cannot read as an order with an id (readOrder:
 * marks and ids at the top or in data/result/response only) and tells only the problem logger; the
 * page then looks complete without it. An element shaped as the real supplier's clients read it
 * (the order nested under `order`: `order.orderId`, `order.status`; shared/real-supplier.md), or one
 * that carries this row's own trxid with its id under a key the list misses, is the row's charged
 * order: the row is read `not-placed` (rejected, nothing charged; with a second account it would be
 * moved and bought again under a new trxid). Real client, store and scripted supplier on 127.0.0.1.
 */
import { describe, expect, it } from 'vitest';
import { verifyRow } from '../../src/poll/verify.js';
import { pubgRow } from '../unit/fake-supplier.js';
import { scriptedWorld } from '../unit/scripted-supplier.js';

describe('a history element the reader cannot take as an order is not proof of absence', () => {
  for (const [name, entry] of [
    ['nested under `order`', { order: { orderId: 'ORD-9', status: 'processing', trxid: 'tu-row-0', game: 'pubg', packName: '60 UC', userId: '5123456789' } }],
    ['the row\'s trxid, its id under `order_no`', { order_no: 'ORD-9', status: 'processing', trxid: 'tu-row-0', game: 'pubg', packName: '60 UC', userId: '5123456789' }],
  ] as const) {
    it(`${name}: the row is not read as not placed`, async () => {
      const w = await scriptedWorld([pubgRow(0)]);
      w.set(() => ({ body: { success: true, count: 1, orders: [entry] } }));
      // Refused after an uncertain attempt (the first send got no answer): the history decides.
      w.sql(0, `state = 'verifying', attempts = 2, first_sent_at = ?, error = ?, reject_code = 'INVALID_PACK'`, Date.now() - 5_000, 'INVALID_PACK: Invalid pack');
      // Either the order is read (nested under `order`), or the page is refused as proving nothing
      // (an id under a key no reader knows): the caller reads the history again later, the stall
      // bound sends the row to a person. Never "not placed".
      const outcome = await verifyRow(w.rt, w.rt.rows.get('b1', 0)!).catch((err: Error) => {
        expect(err.name).toBe('ApiResponseShapeError');
        return 'unread';
      });
      expect({ outcome, state: w.rt.rows.get('b1', 0)!.state }).not.toMatchObject({ outcome: 'not-placed' });
      expect(w.rt.rows.get('b1', 0)!.state).not.toBe('rejected');
    });
  }
});
