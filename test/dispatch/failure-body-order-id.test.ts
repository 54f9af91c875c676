/**
 * Defect 5's rule, from the other side: a failure body that names an id under an ORDER's own key
 * (orderId / order_id) but no status word. Before 7add4e9 it was recorded as placed; now a first
 * send ends `rejected` ("nothing charged"). The money-safe reading is "the order may exist": resend
 * the same trxid (a replay settles it either way). Real client and sender; scripted supplier.
 */
import { describe, expect, it } from 'vitest';
import { sendRow } from '../../src/dispatch/sender.js';
import type { NewRow } from '../../src/store/rows.js';
import { scriptedWorld, senderDeps } from '../unit/scripted-supplier.js';

const topUp: NewRow = {
  idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-fb', userId: '5123456789' }, error: null,
  productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92,
};

describe('a failure body naming an orderId (the order\'s own key) without a status', () => {
  for (const [status, body] of [
    [200, { success: false, orderId: 'ORD-77', error: 'PROVIDER TIMEOUT' }],
    [200, { success: false, order_id: 'ORD-77', message: 'Order failed, please contact admin' }],
    [400, { success: false, orderId: 'ORD-77', error: 'PROVIDER ERROR' }],
  ] as const) {
    it(`${status} ${JSON.stringify(body)}: never read as "nothing charged" on a first send`, async () => {
      const w = await scriptedWorld([topUp]);
      w.set(() => ({ status, body }));
      const out = await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!);
      expect({ out, state: w.rt.rows.get('b1', 0)!.state }).not.toEqual({ out: 'rejected', state: 'rejected' });
    });
  }
});
