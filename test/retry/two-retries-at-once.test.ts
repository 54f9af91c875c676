/**
 * Adversarial review (adv2): two retries of the same batch at once (a double click on the console's
 * Retry button, or the console and `topup retry` together). retryPlan's "already retried as" check
 * runs before the claim's first await, and the claim does not check again (ops/retry.ts
 * createRetryBatch → claimFile → recordClaim): both retries are created, with the SAME trxids
 * (derived from the batch id and the row index). The second batch's rows then all end `invalid`
 * ("trxid … already used"), a batch of failures the operator did not ask for; with a load of both
 * at once, the second's insert meets the unique index on trxids.
 *
 * Expected (ops/retry.ts's own rule, "a batch is retried once"): one retry batch; the other call
 * is refused naming it.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { finishBatch } from '../../src/outbox/finish.js';
import { createRetryBatch } from '../../src/ops/retry.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

describe('adv2: two retries of one batch at once', () => {
  it('one retry batch is made; the other call is refused', async () => {
    const rt = await supplierWorld((_req: IncomingMessage, res) => res.end(JSON.stringify({ success: true, balanceUsd: 100, currency: 'USD' })), [pubgRow(0), pubgRow(1)]);
    for (const idx of [0, 1]) {
      rt.db.prepare(`UPDATE rows SET state = 'cancelled', order_id = ?, refunded = 1, error = 'OUT OF STOCK', attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = ?`).run(`O${idx}`, idx);
    }
    await finishBatch(rt, rt.batches.get('b1')!);

    const outcomes = await Promise.allSettled([createRetryBatch(rt, 'b1'), createRetryBatch(rt, 'b1')]);
    const made = outcomes.filter((o) => o.status === 'fulfilled');
    expect(made).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult | undefined;
    expect(String(refused?.reason)).toMatch(/already retried as batch/);
    expect(rt.db.prepare(`SELECT count(*) AS n FROM batches WHERE retry_of = 'b1'`).get()).toEqual({ n: 1 });
  });
});
