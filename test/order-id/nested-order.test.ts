/**
 * Review of ident36 (issue 29, "every identity declared once"): the real supplier's public clients
 * read the order from a nested `order` object (`order.orderId`, `order.status`;
 * /work/shared/real-supplier.md, "Example shapes seen"). api/order-id.ts looks for an order's id at
 * the top of a body and in the envelopes `data`, `result`, `response` only, and classify reads the
 * status only there too. A charged first send refused with its order under `order` (a 400 "that
 * carries an order", the mistake the supplier notes list) is classified `rejected`: the row ends as
 * "nothing charged" while the supplier holds its order. Real client and sender, the real store in a
 * temp home; the scripted supplier on 127.0.0.1 made the order on the first POST and answers every
 * resend of the trxid with it (an idempotent replay).
 */
import { describe, expect, it } from 'vitest';
import { sendRow } from '../../src/dispatch/sender.js';
import type { NewRow } from '../../src/store/rows.js';
import { scriptedWorld, senderDeps } from '../unit/scripted-supplier.js';

const topUp: NewRow = {
  idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-nested', userId: '5123456789' }, error: null,
  productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92,
};

describe('a charged first send refused with its order nested under `order`', () => {
  for (const [status, body] of [
    [400, { success: false, error: 'PROVIDER ERROR', order: { orderId: 'ORD-88', status: 'processing' } }],
    [422, { success: false, message: 'Gagal', order: { order_id: 'ORD-88' } }],
  ] as const) {
    it(`${status} ${JSON.stringify(body)}: the row stays in doubt, the resend finds the order`, async () => {
      const w = await scriptedWorld([topUp]);
      let post = 0;
      w.set(() => (++post === 1
        ? { status, body }
        : { body: { orderCreated: true, orderId: 'ORD-88', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789', idempotentReplay: true } }));
      const deps = senderDeps(w.rt);
      const first = await sendRow(deps, w.rt.rows.get('b1', 0)!);
      // The order read from the refusal itself (its id and status under `order`): placed at once;
      // or, where the refusal names it without a status, in doubt and found by the resend.
      if (first !== 'placed') {
        expect({ first, state: w.rt.rows.get('b1', 0)!.state }).toEqual({ first: 'retry', state: 'resending' });
        w.sql(0, 'next_try_at = 0');
        expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('placed');
      }
      expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', orderId: 'ORD-88' });
    });
  }
});
