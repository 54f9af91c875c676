/**
 * Adversarial review (adv3): `review resolve --charged ID` refuses an order another row holds
 * "in any letter case and spacing" (rows.placedBy: lower(trim(order_id)) = lower(trim(?))). SQLite's
 * trim() removes the ASCII space only. An id copied from the supplier's web panel ends in a
 * non-breaking space (or, from a spreadsheet cell, a tab): placedBy does not see the row that
 * holds the order, the API does not know the id as typed (404), the tool advises --force, and
 * --force records the review row `completed` with the order another row holds (the unique index
 * on order ids compares the bytes). One charge, two rows completed: the review row's customer is
 * never served and never retried. The commit promises "--force never overrides a held order".
 *
 * Expected: refused, naming the row that holds the order, --force or not.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { resolveReview } from '../../src/ops/review.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

type Answer = { status?: number; body: unknown };

async function twoRowsOnePlayer(answer: (req: IncomingMessage) => Answer) {
  const first = pubgRow(0);
  const second = { ...pubgRow(0), idx: 1, line: 3, request: { ...first.request!, trxid: 'tu-row-1' } };
  return supplierWorld((req, res) => {
    const a = answer(req);
    res.statusCode = a.status ?? 200;
    res.end(JSON.stringify(a.body));
  }, [first, second]);
}

const end = (rt: Awaited<ReturnType<typeof twoRowsOnePlayer>>, idx: number, sql: string): void => {
  rt.db.prepare(`UPDATE rows SET ${sql}, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = ?`).run(idx);
};

// The supplier knows ORD-77 exactly; the id with anything after it is not found.
const supplier = (req: IncomingMessage): Answer =>
  req.url === '/orders/ORD-77'
    ? { body: { success: true, orderId: 'ORD-77', status: 'Completed', userId: '5123456789', amountUsd: '0.92' } }
    : req.url?.startsWith('/orders/')
      ? { status: 404, body: { success: false, message: 'order not found' } }
      : { body: { success: true, balanceUsd: 100, currency: 'USD' } };

describe('adv3: review resolve --charged with a held order id copied with an invisible space', () => {
  for (const [what, id] of [['a non-breaking space (copied from a web page)', 'ORD-77\u00a0'], ['a tab (copied from a spreadsheet cell)', 'ORD-77\t']] as const) {
    it(`${what}: refused, even with --force`, async () => {
      const rt = await twoRowsOnePlayer(supplier);
      end(rt, 0, `state = 'completed', order_id = 'ORD-77', amount_usd = 0.92`);
      end(rt, 1, `state = 'review', error = 'REVIEW: no answer for a day'`);
      await finishBatch(rt, rt.batches.get('b1')!);

      await expect(resolveReview(rt, { batchId: 'b1', line: 3, chargedOrderId: id, by: 'ana', force: true })).rejects.toThrow(/already belongs to batch b1, line 2/);
      expect(rt.rows.get('b1', 1)!.state).toBe('review');
    });
  }
});
