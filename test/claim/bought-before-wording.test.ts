/**
 * A row whose trxid an earlier row holds names that row's order truthfully: "bought" only when
 * the order completed; a cancelled (refunded) or unfinished one was "sent", not bought.
 */
import { describe, expect, it } from 'vitest';
import { boughtBefore } from '../../src/claim/repeats.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

describe('the wording of a trxid bought before', () => {
  it('completed: bought; cancelled and refunded, or processing: sent', async () => {
    const rt = await supplierWorld((_req, res) => res.end('{}'), [pubgRow(0)]);
    const set = (sql: string): void => void rt.db.prepare(`UPDATE rows SET ${sql}, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 0`).run();
    set(`state = 'completed', order_id = 'ORD1', amount_usd = 0.92`);
    expect(boughtBefore(rt, { batchId: 'b1', idx: 0 }, 't1')).toMatch(/^already bought under trxid t1: line \d+ of batch b1.* bought it as order ORD1 \(completed\); not bought again/);
    set(`state = 'cancelled', refunded = 1`);
    const cancelled = boughtBefore(rt, { batchId: 'b1', idx: 0 }, 't1')!;
    expect(cancelled).toMatch(/^already sent under trxid t1: line \d+ of batch b1.* sent it as order ORD1 \(cancelled, refunded\); not bought again/);
    expect(cancelled).not.toMatch(/bought it/);
    set(`state = 'processing'`);
    expect(boughtBefore(rt, { batchId: 'b1', idx: 0 }, 't1')).toMatch(/sent it as order ORD1 \(processing\)/);
  });
});
