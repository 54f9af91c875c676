/**
 * Issue 11, review rows are resolved, not final; and `topup retry` never buys twice.
 * A small HTTP supplier on 127.0.0.1 (see fake-supplier.ts); store, client, recheck, resolution,
 * retry and the result writer are the real ones, in a temp home.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { ReviewRecheck } from '../../src/poll/review-recheck.js';
import { resolveReview } from '../../src/ops/review.js';
import { createRetryBatch } from '../../src/ops/retry.js';
import { TRXID_USED_CODE } from '../../src/store/rows.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

type Answer = { status?: number; body: unknown };

async function world(rows = [pubgRow(0), pubgRow(1), pubgRow(2), pubgRow(3), pubgRow(4), pubgRow(5)]) {
  let script: (req: IncomingMessage) => Answer = () => ({ body: { success: true, balanceUsd: 100, currency: 'USD' } });
  const rt = await supplierWorld((req: IncomingMessage, res: ServerResponse) => {
    const a = script(req);
    res.statusCode = a.status ?? 200;
    res.end(JSON.stringify(a.body));
  }, rows);
  return { rt, set: (s: (req: IncomingMessage) => Answer) => void (script = s) };
}

function end(rt: Runtime, idx: number, sql: string, ...args: unknown[]): void {
  rt.db.prepare(`UPDATE rows SET ${sql}, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = ?`).run(...args, idx);
}

async function finish(rt: Runtime): Promise<void> {
  await finishBatch(rt, rt.batches.get('b1')!);
}

const resultRows = (file: string): Record<string, string>[] => parse(readFileSync(file), { columns: true }) as Record<string, string>[];

describe('topup retry buys again only what cannot have been paid', () => {
  it('leaves out review rows, unrefunded cancels, player-id failures (unless asked) and "trxid already used" refusals', async () => {
    const { rt } = await world();
    end(rt, 0, `state = 'cancelled', order_id = 'O0', refunded = 1, error = 'OUT OF STOCK'`);
    end(rt, 1, `state = 'cancelled', order_id = 'O1', refunded = 0, error = 'FAILED'`);
    end(rt, 2, `state = 'cancelled', order_id = 'O2', refunded = 1, error = 'Invalid Player ID'`);
    end(rt, 3, `state = 'rejected', error = 'UNKNOWN PID', reject_code = 'UNKNOWN_PID'`);
    end(rt, 4, `state = 'rejected', error = 'trxid already used', reject_code = ?`, TRXID_USED_CODE);
    end(rt, 5, `state = 'review', error = 'REVIEW: unknown'`);
    await finish(rt);

    const r = await createRetryBatch(rt, 'b1');
    expect(r.lines.sort()).toEqual([2, 5]);
    expect(r.left.map((l) => l.line).sort()).toEqual([3, 4, 6, 7]);
    expect(r.left.find((l) => l.line === 3)?.why).toMatch(/WITHOUT a refund/);
    expect(r.left.find((l) => l.line === 4)?.why).toMatch(/player id/);
    const file = join(rt.config.home, r.batch.jobFile);
    const staged = parse(readFileSync(file), { columns: true }) as Record<string, string>[];
    expect(staged.map((s) => s.retryOfLine)).toEqual(['2', '5']);
  });

  it('with includePlayerIdFailures the player-id failures are retried too', async () => {
    const { rt } = await world([pubgRow(0)]);
    end(rt, 0, `state = 'cancelled', order_id = 'O2', refunded = 1, error = 'INVALID PLAYER'`);
    await finish(rt);
    await expect(createRetryBatch(rt, 'b1')).rejects.toThrow(/no rows that can be bought again safely; left out: line 2: failed for the player id/);
    expect((await createRetryBatch(rt, 'b1', { includePlayerIdFailures: true })).lines).toEqual([2]);
  });
});

describe('review rows are rechecked, and resolved by an operator', () => {
  it('the recheck finds the order of a review row, settles it, and the results are written again as version 2', async () => {
    const { rt, set } = await world([pubgRow(0), pubgRow(1)]);
    end(rt, 0, `state = 'completed', order_id = 'OK-0', amount_usd = 0.92`);
    end(rt, 1, `state = 'review', order_id = 'ORD-LATE', error = 'REVIEW: not found', review_since = ?, next_poll_at = 0`, Date.now() - 60_000);
    await finish(rt);
    const first = rt.batches.get('b1')!.resultFile!;
    expect(resultRows(first)[1]).toMatchObject({ status: 'review' });

    set((req) => (req.url === '/orders/ORD-LATE' ? { body: { orderId: 'ORD-LATE', status: 'Completed', amountUsd: '0.92', userId: '5123456790' } } : { body: { success: true, balanceUsd: 99, currency: 'USD' } }));
    expect(await new ReviewRecheck(rt).tick()).toBe(1);
    expect(rt.rows.get('b1', 1)).toMatchObject({ state: 'completed', resolution: 'found', resolvedBy: 'topup review recheck' });
    const b = rt.batches.get('b1')!;
    expect(b).toMatchObject({ state: 'open', resultVersion: 2, finishedAt: null });

    await finish(rt);
    const second = rt.batches.get('b1')!.resultFile!;
    expect(second).toMatch(/\.reviewed\.result\.csv$/); // the one current file after review (docs/results.md)
    expect(resultRows(second)[1]).toMatchObject({ status: 'completed', orderId: 'ORD-LATE' });
    expect(resultRows(first)[1]).toMatchObject({ status: 'review' }); // the first version is untouched
    const summary = JSON.parse(readFileSync(second.replace(/\.result\.csv$/, '.summary.json'), 'utf8')) as { version: number; resolved: unknown[]; review: unknown[] };
    expect(summary).toMatchObject({ version: 2, review: [], resolved: [expect.objectContaining({ line: 3, resolution: 'found' })] });
  });

  it('a recheck that finds another purchase under the row\'s trxid leaves it in review', async () => {
    const { rt, set } = await world([pubgRow(0)]);
    end(rt, 0, `state = 'review', error = 'REVIEW: x', review_since = ?, next_poll_at = 0`, Date.now());
    await finish(rt);
    set(() => ({ body: { success: true, count: 1, orders: [{ orderId: 'X1', status: 'completed', trxid: 'tu-row-0', userId: '999', game: 'pubg' }] } }));
    expect(await new ReviewRecheck(rt).tick()).toBe(0);
    expect(rt.rows.get('b1', 0)!.state).toBe('review');
    expect(rt.rows.get('b1', 0)!.nextPollAt).toBeGreaterThan(Date.now());
  });

  it('a round settles what it finds and sets the next look of every other row it read, with the answer it got', async () => {
    const { rt, set } = await world([pubgRow(0), pubgRow(1), pubgRow(2)]);
    const since = Date.now() - 60_000;
    end(rt, 0, `state = 'review', order_id = 'ORD-0', error = 'REVIEW: x', review_since = ?, next_poll_at = 0`, since);
    end(rt, 1, `state = 'review', order_id = 'ORD-1', error = 'REVIEW: x', review_since = ?, next_poll_at = 0`, since);
    end(rt, 2, `state = 'review', error = 'REVIEW: x', review_since = ?, next_poll_at = 0`, since);
    set((req) =>
      req.url === '/orders/ORD-0' ? { body: { orderId: 'ORD-0', status: 'Completed', amountUsd: '0.92', userId: '5123456789' } }
      : req.url === '/orders/ORD-1' ? { body: { orderId: 'ORD-1', status: 'Completed', amountUsd: '0.92', userId: '999' } } // another player: not this row's
      : { body: { success: true, count: 0, orders: [] } },
    );
    const before = Date.now();
    expect(await new ReviewRecheck(rt).tick()).toBe(1);
    expect(rt.rows.get('b1', 0)).toMatchObject({ state: 'completed', resolution: 'found' });
    const look = (idx: number) => rt.db.prepare(`SELECT state, next_poll_at AS at, last_answer AS answer FROM rows WHERE batch_id = 'b1' AND idx = ?`).get(idx) as { state: string; at: number; answer: string | null };
    for (const idx of [1, 2]) {
      expect(look(idx).state).toBe('review');
      expect(look(idx).at).toBeGreaterThanOrEqual(before + 15 * 60_000); // the first day: every 15 minutes
    }
    expect(look(1).answer).toContain('ORD-1'); // the answer that did not match is kept for the operator
    expect(await new ReviewRecheck(rt).tick()).toBe(0); // nothing is due again in this round's wake
  });

  it('a round cut short by shutdown still sets the next look of the rows it had read', async () => {
    const { rt, set } = await world([pubgRow(0), pubgRow(1)]);
    const since = Date.now() - 60_000;
    end(rt, 0, `state = 'review', order_id = 'ORD-0', error = 'REVIEW: x', review_since = ?, next_poll_at = 0`, since);
    end(rt, 1, `state = 'review', order_id = 'ORD-1', error = 'REVIEW: x', review_since = ?, next_poll_at = 1`, since);
    const stop = new AbortController();
    set((req) => {
      if (req.url === '/orders/ORD-1') stop.abort();
      return { body: { orderId: req.url!.slice('/orders/'.length), status: 'Completed', amountUsd: '0.92', userId: '999' } };
    });
    await expect(new ReviewRecheck(rt).tick(Date.now(), stop.signal)).rejects.toThrow();
    const at = (idx: number) => (rt.db.prepare(`SELECT next_poll_at AS at FROM rows WHERE batch_id = 'b1' AND idx = ?`).get(idx) as { at: number }).at;
    expect(at(0)).toBeGreaterThan(Date.now()); // read before the stop: waits its turn
    expect(at(1)).toBe(1); // cut short while being read: due again at the next start
  });

  it('--not-charged: the row ends rejected with who and when, results written again; retry may then buy it', async () => {
    const { rt } = await world([pubgRow(0)]);
    end(rt, 0, `state = 'review', error = 'REVIEW: no answer for a day'`);
    await finish(rt);
    const r = await resolveReview(rt, { batchId: 'b1', line: 2, notCharged: true, by: 'ana' });
    expect(r.row).toMatchObject({ state: 'rejected', resolution: 'not-charged', resolvedBy: 'ana' });
    expect(r.row.error).toMatch(/^NOT CHARGED \(resolved by ana on .*\); it was in review: REVIEW: no answer for a day/);
    expect(r.summary?.version).toBe(2);
    expect(existsSync(r.summary!.resultFile)).toBe(true);
    expect((await createRetryBatch(rt, 'b1')).lines).toEqual([2]);
  });

  it('--charged ORDER: checked against the API; another purchase or an unknown order is refused unless --force', async () => {
    const { rt, set } = await world([pubgRow(0)]);
    end(rt, 0, `state = 'review', error = 'REVIEW: x'`);
    await finish(rt);
    set((req) =>
      req.url === '/orders/WRONG' ? { body: { orderId: 'WRONG', status: 'completed', userId: '1' } }
        : req.url === '/orders/GONE' ? { status: 404, body: { success: false, error: 'ORDER NOT FOUND' } }
          : req.url === '/orders/RIGHT' ? { body: { orderId: 'RIGHT', status: 'Success', userId: '5123456789', amountUsd: '0.92' } }
            : { body: { success: true, balanceUsd: 1, currency: 'USD' } },
    );
    await expect(resolveReview(rt, { batchId: 'b1', line: 2, chargedOrderId: 'WRONG', by: 'ana' })).rejects.toThrow(/another purchase \(userId: sent "5123456789", the order has "1"\)/);
    await expect(resolveReview(rt, { batchId: 'b1', line: 2, chargedOrderId: 'GONE', by: 'ana' })).rejects.toThrow(/does not know order GONE.*--force/);
    const r = await resolveReview(rt, { batchId: 'b1', line: 2, chargedOrderId: 'RIGHT', by: 'ana' });
    expect(r.row).toMatchObject({ state: 'completed', orderId: 'RIGHT', amountUsd: 0.92, resolution: 'charged' });
    await expect(resolveReview(rt, { batchId: 'b1', line: 2, notCharged: true, by: 'bo' })).rejects.toThrow(/not waiting for review/);
  });

  it('--charged with --force records an order the API cannot confirm, and says so', async () => {
    const { rt, set } = await world([pubgRow(0)]);
    end(rt, 0, `state = 'review', error = 'REVIEW: x'`);
    await finish(rt);
    set(() => ({ status: 404, body: { success: false, error: 'ORDER NOT FOUND' } }));
    const r = await resolveReview(rt, { batchId: 'b1', line: 2, chargedOrderId: 'PANEL-77', by: 'ana', force: true });
    expect(r.row).toMatchObject({ state: 'completed', orderId: 'PANEL-77', amountUsd: 0.92 });
    expect(r.row.note).toMatch(/WITHOUT confirmation from the API/);
  });

  it('--charged with --force on a key/card row says its codes are missing (found by the simulator: a card row completed silently without codes)', async () => {
    const card = { ...pubgRow(0), request: { ...pubgRow(0).request!, userId: undefined, quantity: 2 } };
    delete (card.request as { userId?: string }).userId;
    const { rt, set } = await world([card]);
    end(rt, 0, `state = 'review', error = 'REVIEW: x'`);
    await finish(rt);
    set(() => ({ status: 404, body: { success: false, error: 'ORDER NOT FOUND' } }));
    const r = await resolveReview(rt, { batchId: 'b1', line: 2, chargedOrderId: 'PANEL-78', by: 'ana', force: true });
    expect(r.row).toMatchObject({ state: 'completed', orderId: 'PANEL-78', codes: [] });
    expect(r.row.note).toMatch(/^CODES MISSING: .*WITHOUT confirmation from the API/);
  });
});
