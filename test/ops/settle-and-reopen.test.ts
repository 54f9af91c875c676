/**
 * Issue 24, item 4 (a defect in the seams): a review row settled and its batch reopened are ONE
 * decision. They were two statements without a transaction (in the review recheck and in
 * `topup review resolve`): a process dying between them left a settled row in a `done` batch,
 * whose results nothing writes again (the finishing stage drives open batches only, and the row
 * is no longer in review, so neither the recheck nor an operator can settle it again).
 *
 * The crash is a throwing hook on the batch's reopening (the second statement): a kill there, as a
 * SIGKILL would, ends the process after whatever was committed. Real store, recheck, resolution
 * and result writer in a temp home; the supplier is a small HTTP server (test/unit/fake-supplier.ts).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { ReviewRecheck } from '../../src/poll/review-recheck.js';
import { resolveReview } from '../../src/ops/review.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

type Answer = { status?: number; body: unknown };

/** b1 finished (done, results version 1) with line 2 completed and line 3 in review (order ORD-LATE named). */
async function world(): Promise<{ rt: Runtime; answer: (a: (req: IncomingMessage) => Answer) => void }> {
  let script: (req: IncomingMessage) => Answer = () => ({ body: { success: true, balanceUsd: 100, currency: 'USD' } });
  const rt = await supplierWorld((req: IncomingMessage, res: ServerResponse) => {
    const a = script(req);
    res.statusCode = a.status ?? 200;
    res.end(JSON.stringify(a.body));
  }, [pubgRow(0), pubgRow(1)]);
  rt.db.prepare(`UPDATE rows SET state = 'completed', order_id = 'OK-0', amount_usd = 0.92, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 0`).run();
  rt.db.prepare(`UPDATE rows SET state = 'review', order_id = 'ORD-LATE', error = 'REVIEW: not found', review_since = ?, next_poll_at = 0, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 1`).run(Date.now() - 60_000);
  await finishBatch(rt, rt.batches.get('b1')!);
  expect(rt.batches.get('b1')).toMatchObject({ state: 'done', resultVersion: 1 });
  return { rt, answer: (a) => void (script = a) };
}

/** The process dies right after the row settled, before its batch is reopened; `restart()` brings it back. */
function dieBeforeReopen(rt: Runtime): { restart(): void } {
  const reopen = rt.batches.reopen.bind(rt.batches);
  rt.batches.reopen = () => {
    throw new Error('killed between settling the row and reopening its batch');
  };
  return { restart: () => void (rt.batches.reopen = reopen) };
}

const statusOf = (file: string, line: number): string | undefined =>
  (parse(readFileSync(file), { columns: true }) as Record<string, string>[])[line - 2]?.status;

describe('a review row settles and its batch reopens together, or neither happens', () => {
  it('topup review resolve: a crash between leaves the row in review, and resolving it again writes the next version', async () => {
    const { rt } = await world();
    const crash = dieBeforeReopen(rt);
    await expect(resolveReview(rt, { batchId: 'b1', line: 3, notCharged: true, by: 'ana' })).rejects.toThrow(/killed between/);
    crash.restart();

    // Not a settled row in a done batch whose results are never written again:
    expect(rt.rows.byLine('b1', 3)).toMatchObject({ state: 'review', resolution: null });
    expect(rt.batches.get('b1')).toMatchObject({ state: 'done', resultVersion: 1 });

    // After the restart the operator resolves it again, and the results are written as version 2.
    const r = await resolveReview(rt, { batchId: 'b1', line: 3, notCharged: true, by: 'ana' });
    expect(r.row).toMatchObject({ state: 'rejected', resolution: 'not-charged' });
    expect(r.summary?.version).toBe(2);
    expect(statusOf(r.summary!.resultFile, 3)).toBe('rejected');
  });

  it('the review recheck: a crash between leaves the row in review, and the next round settles it and reopens the batch', async () => {
    const { rt, answer } = await world();
    answer((req) => (req.url === '/orders/ORD-LATE' ? { body: { orderId: 'ORD-LATE', status: 'Completed', amountUsd: '0.92', userId: '5123456790' } } : { body: { success: true, balanceUsd: 99, currency: 'USD' } }));
    const recheck = new ReviewRecheck(rt);
    const crash = dieBeforeReopen(rt);
    expect(await recheck.tick(Date.now())).toBe(0);
    crash.restart();

    expect(rt.rows.byLine('b1', 3)).toMatchObject({ state: 'review', resolution: null });
    expect(rt.batches.get('b1')).toMatchObject({ state: 'done', resultVersion: 1 });

    rt.db.prepare(`UPDATE rows SET next_poll_at = 0 WHERE batch_id = 'b1' AND idx = 1`).run();
    expect(await recheck.tick(Date.now())).toBe(1);
    expect(rt.rows.byLine('b1', 3)).toMatchObject({ state: 'completed', resolution: 'found', orderId: 'ORD-LATE' });
    expect(rt.batches.get('b1')).toMatchObject({ state: 'open', resultVersion: 2 });
    const summary = await finishBatch(rt, rt.batches.get('b1')!);
    expect(summary?.version).toBe(2);
    expect(statusOf(summary!.resultFile, 3)).toBe('completed');
  });
});
