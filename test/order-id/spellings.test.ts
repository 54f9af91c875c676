/**
 * Issue 29, "every identity declared once": whether a failure body names an ORDER was read from two
 * key lists (api/classify.ts: orderId, order_id, orderID; dispatch/failover.ts: the same and
 * id_order). A charged first send refused with the id only under `id_order` (a PHP panel's
 * spelling) was then kept from failover as "names an order" but classified `rejected` ("nothing
 * charged"): the row ended `rejected` while the supplier held its order. Real client and sender,
 * the real store in a temp home; the supplier is the scripted one on 127.0.0.1, which made the
 * order on the first POST and answers every resend of the trxid with it (an idempotent replay).
 */
import { describe, expect, it } from 'vitest';
import { sendRow } from '../../src/dispatch/sender.js';
import type { NewRow } from '../../src/store/rows.js';
import { scriptedWorld, senderDeps } from '../unit/scripted-supplier.js';

const topUp: NewRow = {
  idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-idorder', userId: '5123456789' }, error: null,
  productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92,
};

describe('a charged first send refused with the order id under `id_order` only', () => {
  for (const [status, body] of [
    [400, { success: false, error: 'PROVIDER ERROR', id_order: 'ORD-88' }],
    [200, { status: false, msg: 'Transaksi gagal diproses', data: { id_order: 'ORD-88' } }],
  ] as const) {
    it(`${status} ${JSON.stringify(body)}: the row stays in doubt, the resend finds the order, the row holds it`, async () => {
      const w = await scriptedWorld([topUp]);
      let post = 0;
      w.set(() => (++post === 1
        ? { status, body }
        : { body: { orderCreated: true, orderId: 'ORD-88', status: 'processing', game: 'pubg', packName: '60 UC', userId: '5123456789', idempotentReplay: true } }));
      const deps = senderDeps(w.rt);
      const first = await sendRow(deps, w.rt.rows.get('b1', 0)!);
      expect({ first, state: w.rt.rows.get('b1', 0)!.state }).toEqual({ first: 'retry', state: 'resending' });
      w.sql(0, 'next_try_at = 0');
      expect(await sendRow(deps, w.rt.rows.get('b1', 0)!)).toBe('placed');
      expect(w.rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', orderId: 'ORD-88' });
    });
  }
});
