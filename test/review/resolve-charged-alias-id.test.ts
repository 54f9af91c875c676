/**
 * Adversarial review (adv2): `topup review resolve --charged ORDER_ID` refuses an order id another
 * row already holds (rows.placedBy) only as the operator typed it. The order is then read from the
 * API, but the id the API answers with is not checked: the row is settled under the typed id
 * (`{ ...order, orderId }` in ops/review.ts chargedFacts). Suppliers reach one order by more than one
 * id (the sandbox's real-world mode: the spec id ORD… and the order's public numeric id; case-
 * insensitive lookups), so an operator who copies the id from the supplier's panel settles a review
 * row with an order that another row already holds: one charge, two rows "completed", the review
 * row's customer never served and never retried, and the unique index on order ids does not see it.
 *
 * Expected: refused, naming the row that holds the order (as for the same id typed exactly).
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { resolveReview } from '../../src/ops/review.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

type Answer = { status?: number; body: unknown };

async function twoRowsOnePlayer(answer: (req: IncomingMessage) => Answer) {
  // Two rows for the same player and pack (two top-ups meant): line 2 was bought, line 3 is in review.
  const first = pubgRow(0);
  const second = { ...pubgRow(0), idx: 1, line: 3, request: { ...first.request!, trxid: 'tu-row-1' } };
  const rt = await supplierWorld((req, res) => {
    const a = answer(req);
    res.statusCode = a.status ?? 200;
    res.end(JSON.stringify(a.body));
  }, [first, second]);
  return rt;
}

const end = (rt: Awaited<ReturnType<typeof twoRowsOnePlayer>>, idx: number, sql: string, ...args: unknown[]): void => {
  rt.db.prepare(`UPDATE rows SET ${sql}, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = ?`).run(...args, idx);
};

describe('adv2: review resolve --charged with an order another row holds under another spelling of its id', () => {
  it("the order's other id (panel id ORD…, the row holds the API's numeric id): refused, even with --force, naming the row that holds it", async () => {
    const rt = await twoRowsOnePlayer((req) =>
      req.url === '/orders/ORD1000323'
        ? { body: { success: true, orderId: 9001, id: 9001, status: 'Completed', userId: '5123456789', amountUsd: '0.92' } }
        : { body: { success: true, balanceUsd: 100, currency: 'USD' } },
    );
    end(rt, 0, `state = 'completed', order_id = '9001', amount_usd = 0.92`);
    end(rt, 1, `state = 'review', error = 'REVIEW: no answer for a day'`);
    await finishBatch(rt, rt.batches.get('b1')!);

    // Today: refused as "the API could not be asked … record it anyway with --force" (the client saw
    // the answer name order 9001); the operator follows that advice and --force settles the row with
    // the order line 2 holds.
    await expect(resolveReview(rt, { batchId: 'b1', line: 3, chargedOrderId: 'ORD1000323', by: 'ana' })).rejects.toThrow(/already belongs to batch b1, line 2/);
    await expect(resolveReview(rt, { batchId: 'b1', line: 3, chargedOrderId: 'ORD1000323', by: 'ana', force: true })).rejects.toThrow(/already belongs to batch b1, line 2/);
    expect(rt.rows.get('b1', 1)!.state).toBe('review');
  });

  it('the same id in other letter case: refused', async () => {
    const rt = await twoRowsOnePlayer((req) =>
      req.url?.toLowerCase() === '/orders/ord-77'
        ? { body: { success: true, orderId: 'ORD-77', status: 'Completed', userId: '5123456789', amountUsd: '0.92' } }
        : { body: { success: true, balanceUsd: 100, currency: 'USD' } },
    );
    end(rt, 0, `state = 'completed', order_id = 'ORD-77', amount_usd = 0.92`);
    end(rt, 1, `state = 'review', error = 'REVIEW: no answer for a day'`);
    await finishBatch(rt, rt.batches.get('b1')!);

    await expect(resolveReview(rt, { batchId: 'b1', line: 3, chargedOrderId: 'ord-77', by: 'ana' })).rejects.toThrow(/already belongs to batch b1, line 2/);
    expect(rt.rows.get('b1', 1)!.state).toBe('review');
  });
});
