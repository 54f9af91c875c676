/**
 * `topup review` in a terminal: the `why` column is one short line (the whole text stays in --json
 * and --csv), and the orderId column shows the order the row's last stored answer names when the
 * row has none of its own — marked as from the answer, and never taken from the `why` text.
 */
import { describe, expect, it } from 'vitest';
import { heldOrderId, tableWhy } from '../../src/commands/review.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

describe('topup review table columns', () => {
  it('why is cut to one line; orderId comes from the row or its stored answer, never from the text', async () => {
    const rt = await supplierWorld((_req, res) => res.end('{}'), [pubgRow(0), { ...pubgRow(0), idx: 1, line: 3, request: { ...pubgRow(0).request!, trxid: 'tu-row-1' } }]);
    const long = `REVIEW: the supplier answered order ORD1000009 for this trxid; ${'the answer could mean charged or not charged, so a person decides. '.repeat(9)}`;
    expect(long.length).toBeGreaterThan(600);
    const answer = JSON.stringify({ route: 'POST /orders', status: 200, at: '2026-11-27T00:00:00.000Z', body: { success: true, orderId: 'ORD1000009', status: 'Pending' } });
    rt.db.prepare(`UPDATE rows SET state = 'review', error = ?, last_answer = ?, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 0`).run(long, answer);
    rt.db.prepare(`UPDATE rows SET state = 'review', error = ?, last_answer = NULL, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 1`).run(long);
    const [withAnswer, without] = [rt.rows.get('b1', 0)!, rt.rows.get('b1', 1)!];

    const why = tableWhy(withAnswer.error);
    expect(why.length).toBeLessThanOrEqual(140);
    expect(why).toMatch(/^REVIEW: the supplier answered order ORD1000009 .*… \(whole: --json\)$/);
    expect(tableWhy('REVIEW: short\n  text')).toBe('REVIEW: short text');

    expect(heldOrderId(withAnswer)).toBe('ORD1000009 (in the last answer)');
    // The same text naming the order, but no stored answer holding it: nothing invented.
    expect(heldOrderId(without)).toBe('');
    expect(heldOrderId({ orderId: 'ORD7', lastAnswer: answer })).toBe('ORD7');
  });
});
