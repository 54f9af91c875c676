/**
 * `topup retry` in-process (the CLI tests run it through dist/, where `npm run mutate` cannot see
 * a mutant): which finished rows are bought again and which are left out, and why. A row whose
 * order may exist or was paid is never bought again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { createRetryBatch, notRetryable, retryPlan } from '../../src/ops/retry.js';
import { REPEAT_CODE } from '../../src/claim/repeats.js';
import { TRXID_USED_CODE } from '../../src/store/rows.js';
import type { Runtime } from '../../src/runtime.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

/** Batch b1, finished, with one row per case: [state, order_id, reject_code, refunded, error]. */
async function finishedBatch(cases: [string, string | null, string | null, number | null, string | null][]): Promise<Runtime> {
  const rt = await supplierWorld(() => {}, cases.map((_, i) => pubgRow(i)));
  const set = rt.db.prepare(`UPDATE rows SET state = ?, order_id = ?, reject_code = ?, refunded = ?, error = ? WHERE batch_id = 'b1' AND idx = ?`);
  cases.forEach((c, i) => set.run(...c, i));
  rt.batches.finish('b1', null, join(rt.config.home, 'outbox', 'x.result.csv'), Date.now());
  return rt;
}

describe('topup retry: what is bought again', () => {
  it('takes refused and refunded rows; leaves out every row whose order may exist or was paid, saying why', async () => {
    const rt = await finishedBatch([
      ['rejected', null, 'PRODUCT_UNAVAILABLE', null, 'out of stock'], // line 2: taken
      ['cancelled', 'O-2', null, 1, 'supplier failed'], // line 3: refunded → taken
      ['cancelled', 'O-3', null, 0, 'supplier failed'], // line 4: paid, not refunded
      ['cancelled', 'O-4', null, null, 'supplier failed'], // line 5: refund unknown
      ['rejected', 'O-5', 'BAD', null, 'refused but named an order'], // line 6
      ['rejected', null, TRXID_USED_CODE, null, 'trxid already used'], // line 7
      ['review', null, null, null, 'no answer'], // line 8
      ['cancelled', 'O-8', null, 1, 'INVALID PLAYER ID'], // line 9: the same id fails again
      ['completed', 'O-9', null, null, null], // line 10: not a candidate
    ]);
    const plan = retryPlan(rt, 'b1');
    expect(plan.rows.map((r) => r.line)).toEqual([2, 3]);
    expect(plan.usd).toBe(1.84);
    const why = Object.fromEntries(plan.left.map((l) => [l.line, l.why]));
    expect(Object.keys(why).map(Number).sort((a, b) => a - b)).toEqual([4, 5, 6, 7, 8, 9]);
    expect(why[4]).toMatch(/WITHOUT a refund/);
    expect(why[5]).toMatch(/WITHOUT a refund/);
    expect(why[6]).toMatch(/order for it may exist/);
    expect(why[7]).toMatch(/order for it may exist/);
    expect(why[8]).toMatch(/in review/);
    expect(why[9]).toMatch(/player id/);

    // Asked to: the player-id failure is taken too; nothing else changes.
    expect(retryPlan(rt, 'b1', { includePlayerIdFailures: true }).rows.map((r) => r.line)).toEqual([2, 3, 9]);
  });

  it('notRetryable: only rejected and cancelled rows, never one in flight or finished well', async () => {
    const rt = await finishedBatch([['rejected', null, null, null, 'x']]);
    const row = rt.rows.get('b1', 0)!;
    expect(notRetryable(row, false)).toBeUndefined();
    for (const state of ['pending', 'sending', 'resending', 'processing', 'completed', 'skipped', 'invalid'] as const) {
      expect(notRetryable({ ...row, state }, true), state).toBe(`ended ${state}`);
    }
  });

  it('writes new trxids and the original lines, claims the file once, and refuses a second retry of the same batch', async () => {
    const rt = await finishedBatch([
      ['rejected', null, 'PRODUCT_UNAVAILABLE', null, 'out of stock'],
      ['completed', 'O-1', null, null, null],
      ['cancelled', 'O-2', null, 1, 'failed'],
    ]);
    const made = await createRetryBatch(rt, 'b1');
    expect(made).toMatchObject({ rows: 2, lines: [2, 4], left: [] });
    expect(made.batch).toMatchObject({ origin: 'retry', state: 'claimed' });
    const file = readFileSync(join(rt.config.home, made.batch.jobFile), 'utf8');
    const [header, ...body] = parse(file) as string[][];
    expect(header).toEqual(['pid', 'userId', 'trxid', 'retryOfLine']);
    expect(body.map((r) => r[3])).toEqual(['2', '4']);
    const trxids = body.map((r) => r[2]!);
    // New purchases: not the old trxids, not each other, and the same ones however often it is made.
    expect(trxids).not.toContain('tu-row-0');
    expect(new Set(trxids).size).toBe(2);
    expect(trxids.every((t) => /^tu[0-9a-f]{30}$/.test(t))).toBe(true);
    expect(() => retryPlan(rt, 'b1')).toThrow(new RegExp(`already retried as batch ${made.batch.id}`));
  });

  it('refuses a batch that has not finished, and one with nothing that can be bought again safely', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    expect(() => retryPlan(rt, 'b1')).toThrow(/has not finished/);
    rt.db.prepare(`UPDATE rows SET state = 'review' WHERE batch_id = 'b1'`).run();
    rt.batches.finish('b1', null, join(rt.config.home, 'outbox', 'x.result.csv'), Date.now());
    expect(() => retryPlan(rt, 'b1')).toThrow(/no rows that can be bought again safely; left out: line 2: in review/);
  });

  it('--repeats buys exactly the rows skipped as repeats, and only those', async () => {
    const rt = await finishedBatch([
      ['skipped', null, REPEAT_CODE, null, 'repeats line 2 of batch b0'],
      ['skipped', null, null, null, 'batch cancelled'],
      ['rejected', null, 'X', null, 'refused'],
    ]);
    expect(retryPlan(rt, 'b1', { repeats: true }).rows.map((r) => r.line)).toEqual([2]);
    // Buying the repeats does not use up the batch's one ordinary retry, and vice versa.
    expect(await createRetryBatch(rt, 'b1', { repeats: true })).toMatchObject({ rows: 1, lines: [2] });
    expect(retryPlan(rt, 'b1').rows.map((r) => r.line)).toEqual([4]);
    const retry = await createRetryBatch(rt, 'b1');
    expect(retry).toMatchObject({ rows: 1, lines: [4] });
    expect(() => retryPlan(rt, 'b1')).toThrow(/already retried/);
  });
});
