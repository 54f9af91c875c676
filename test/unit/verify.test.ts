/**
 * §7 resubmit ambiguity, the branch the sandbox cannot reach: a real API's history need not echo
 * our trxid, so a row refused after a lost answer is matched by game, pack, player and amount.
 * The supplier's history is served here by a small HTTP server (the one part that cannot be the
 * sandbox, which always echoes trxids); the store and the client are the real ones.
 */
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime.js';
import { verifyRow } from '../../src/poll/verify.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

type HistoryOrder = Record<string, unknown>;

async function world(orders: HistoryOrder[]): Promise<Runtime> {
  const rt = await supplierWorld((_req, res) => res.end(JSON.stringify({ success: true, count: orders.length, orders })), [pubgRow(0)]);
  const now = Date.now();
  // The row's story: sent, answer lost, resent, refused with a 400.
  const db = rt.db;
  db.prepare(`UPDATE rows SET state = 'verifying', attempts = 2, first_sent_at = ?, error = 'INVALID PACK', reject_code = 'INVALID_PACK' WHERE batch_id = 'b1'`).run(now - 5_000);
  return rt;
}

const order = (over: HistoryOrder = {}): HistoryOrder => ({
  orderId: 'ORD-9',
  status: 'completed',
  game: 'pubg',
  packName: '60 UC',
  userId: '5123456789',
  amountUsd: 0.92,
  ...over,
});

describe('verifying a row refused after an uncertain attempt', () => {
  it('exactly one unclaimed order matching game, pack, player and amount: it was placed', async () => {
    const r = await world([order({ orderId: 'ORD-other', userId: '999' }), order()]);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('placed');
    expect(r.rows.get('b1', 0)).toMatchObject({ state: 'completed', orderId: 'ORD-9', amountUsd: 0.92 });
  });

  it('two orders that both match: the row goes to review, never guessed either way', async () => {
    const r = await world([order({ orderId: 'ORD-1' }), order({ orderId: 'ORD-2' })]);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('review');
    const row = r.rows.get('b1', 0)!;
    expect(row.state).toBe('review');
    expect(row.error).toMatch(/2 orders in history match/);
  });

  it('no match and the whole history was read: nothing was placed, the refusal stands', async () => {
    const r = await world([order({ orderId: 'ORD-x', userId: '111' })]);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('not-placed');
    const row = r.rows.get('b1', 0)!;
    expect(row.state).toBe('rejected');
    expect(row.error).toMatch(/INVALID PACK \(order history checked: no order was placed\)/);
  });

  it('no match, but history is full and does not reach back to the first attempt: review', async () => {
    const full = Array.from({ length: 200 }, (_, i) => order({ orderId: `ORD-n${i}`, userId: `8${i}` }));
    const r = await world(full);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('review');
    expect(r.rows.get('b1', 0)!.error).toMatch(/does not reach back far enough/);
  });

  it('the price moved since the file was loaded: the order still matches (a charged row is never reported as not charged)', async () => {
    const r = await world([order({ amountUsd: 1.05 })]);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('placed');
    expect(r.rows.get('b1', 0)).toMatchObject({ state: 'completed', orderId: 'ORD-9', amountUsd: 1.05 });
  });

  it('one matching order but another row for the same purchase is also in doubt: review, not a guess', async () => {
    const r = await world([order()]);
    r.rows.insertAll('b1', [{ idx: 1, line: 3, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-row-1', userId: '5123456789' }, error: null, productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92 }], Date.now());
    r.db.prepare(`UPDATE rows SET state = 'resending' WHERE batch_id = 'b1' AND idx = 1`).run();
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('review');
    expect(r.rows.get('b1', 0)!.error).toMatch(/another row for the same purchase is in flight or in doubt/);
  });

  it('one matching order but another row for the same purchase is in review without an order (a submit --again copy): review, not its order (found by the simulator)', async () => {
    const r = await world([order()]);
    r.rows.insertAll('b1', [{ idx: 1, line: 3, cells: ['PUBG-60', '5123456789'], request: { pid: 'PUBG-60', trxid: 'tu-row-1', userId: '5123456789' }, error: null, productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92 }], Date.now());
    r.db.prepare(`UPDATE rows SET state = 'review', error = 'REVIEW: no answer' WHERE batch_id = 'b1' AND idx = 1`).run();
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('review');
    expect(r.rows.get('b1', 0)!.error).toMatch(/another row for the same purchase is in flight or in doubt/);
  });

  it('a history that echoes trxids decides by trxid alone', async () => {
    const r = await world([order({ orderId: 'ORD-mine', trxid: 'tu-row-0' }), order({ orderId: 'ORD-lookalike', trxid: 'someone-else' })]);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('placed');
    expect(r.rows.get('b1', 0)!.orderId).toBe('ORD-mine');
  });
});

describe('verifying a row no send answered within TOPUP_REVIEW_AFTER_MS (never refused)', () => {
  const unanswered = (r: Runtime): void =>
    void r.db.prepare(`UPDATE rows SET state = 'searching', reject_code = NULL, error = 'no definite answer since …' WHERE batch_id = 'b1'`).run();

  it('an order with its own trxid settles it', async () => {
    const r = await world([order({ orderId: 'ORD-own', trxid: 'tu-row-0' })]);
    unanswered(r);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('placed');
    expect(r.rows.get('b1', 0)).toMatchObject({ orderId: 'ORD-own' });
  });

  it('one order that only looks like it (history without trxids) is not taken as its own: review', async () => {
    const r = await world([order()]);
    unanswered(r);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('review');
    expect(r.rows.get('b1', 0)!.error).toMatch(/order history does not show trxids/);
  });

  it('an empty history is not taken as "not charged": review, saying an order can still appear', async () => {
    const r = await world([order({ orderId: 'ORD-x', trxid: 'someone-else' })]);
    unanswered(r);
    expect(await verifyRow(r, r.rows.get('b1', 0)!)).toBe('review');
    expect(r.rows.get('b1', 0)!.error).toMatch(/showed no order with this trxid at .*, but an order can still appear/);
  });
});
