/**
 * TOPUP_REVIEW_AFTER_MS: how long a row may go without a definite answer. The clock is the
 * row's doubt, not its age: it starts at the first send whose answer was lost, or at the first
 * poll that did not find its order, and an answer that settles anything stops it.
 *
 * The supplier is a small HTTP server here (the sandbox never forgets an order; see
 * fake-supplier.ts); the store, the client and the poller are the real ones.
 */
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime.js';
import { Poller } from '../../src/poll/poller.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

const DAY = 86_400_000;

/** A runtime against a supplier whose history lists `shown` as processing and 404s every GET /orders/:id. */
async function world(shown: Set<string>): Promise<{ rt: Runtime; lookups: string[] }> {
  const lookups: string[] = [];
  const rt = await supplierWorld(
    (req, res) => {
      lookups.push(`${req.method} ${req.url}`);
      if (req.url?.startsWith('/orders/')) {
        res.statusCode = 404;
        res.end(JSON.stringify({ success: false, error: 'ORDER NOT FOUND' }));
        return;
      }
      const orders = [...shown].map((orderId) => ({ orderId, status: 'processing' }));
      res.end(JSON.stringify({ success: true, count: orders.length, orders }));
    },
    [pubgRow(0), pubgRow(1)],
    { TOPUP_REVIEW_AFTER_MS: '60000' },
  );
  return { rt, lookups };
}

const placed = (rt: Runtime, idx: number, orderId: string, firstSentAt: number): void =>
  void rt.db.prepare(`UPDATE rows SET state = 'processing', attempts = 1, order_id = ?, first_sent_at = ?, next_poll_at = 0 WHERE batch_id = 'b1' AND idx = ?`).run(orderId, firstSentAt, idx);

describe('the doubt clock in the store', () => {
  it('starts at the send whose answer was lost, not at the first send of a row that waited (e.g. for balance) in between', async () => {
    const { rt } = await world(new Set());
    const now = Date.now();
    const at = (t: number) => ({ owner: rt.owner, now: t });
    // Sent two days ago and refused for balance (a definite answer): back to pending, no doubt.
    rt.db.prepare(`UPDATE rows SET state = 'pending', attempts = 1, first_sent_at = ?, last_sent_at = ? WHERE idx = 0`).run(now - 2 * DAY, now - 2 * DAY);
    expect(rt.rows.get('b1', 0)!.doubtSince).toBeNull();
    // Sent again now, and this answer is lost.
    expect(rt.rows.markSending('b1', 0, at(now), now + 15_000)).toBe(true);
    expect(rt.rows.get('b1', 0)!.doubtSince).toBeNull();
    rt.rows.noAnswer('b1', 0, at(now), { nextTryAt: now + 500, counted: true, answer: null });
    expect(rt.rows.get('b1', 0)).toMatchObject({ state: 'resending', doubtSince: now, doubtTries: 1 });
    // Resends keep the start of the doubt and count the unanswered sends; an order in hand ends it.
    expect(rt.rows.markSending('b1', 0, at(now + 1_000), now + 16_000)).toBe(true);
    rt.rows.noAnswer('b1', 0, at(now + 1_050), { nextTryAt: now + 2_000, counted: true, answer: null });
    expect(rt.rows.get('b1', 0)).toMatchObject({ doubtSince: now, doubtTries: 2 });
    expect(rt.rows.markSending('b1', 0, at(now + 3_000), now + 18_000)).toBe(true);
    rt.rows.placed('b1', 0, { orderId: 'ORD-1', status: 'processing' }, now + 3_100, now + 5_000);
    expect(rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', doubtSince: null, doubtTries: 0 });
  });

  it('a row a dead process left `sending` is taken over in doubt, dated from the lost attempt', async () => {
    const { rt } = await world(new Set());
    const now = Date.now();
    rt.db.prepare(`UPDATE rows SET state = 'sending', attempts = 1, first_sent_at = ?, last_sent_at = ? WHERE idx = 0`).run(now - 9_000, now - 9_000);
    rt.rows.takenOver('b1', now);
    expect(rt.rows.get('b1', 0)).toMatchObject({ state: 'resending', doubtSince: now - 9_000, nextTryAt: 0 });
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now }, now + 15_000)).toBe(true);
    expect(rt.rows.get('b1', 0)).toMatchObject({ state: 'resending', attempts: 2 });
  });
});

describe('an order the API no longer finds', () => {
  it('is looked at again, slowly; ends review only after TOPUP_REVIEW_AFTER_MS of not being found, however old the order', async () => {
    const { rt, lookups } = await world(new Set());
    const now = Date.now();
    placed(rt, 0, 'ORD-old', now - 3 * DAY); // placed long ago, but never missing before
    placed(rt, 1, 'ORD-new', now - 1_000);
    const poller = new Poller(rt, rt.account);
    expect((await poller.round(rt.rows.duePolls(['b1'], Date.now(), 10), 2, false)).updated).toBe(0);
    expect(lookups).toEqual(expect.arrayContaining(['GET /orders/ORD-old', 'GET /orders/ORD-new']));
    for (const idx of [0, 1]) {
      const r = rt.rows.get('b1', idx)!;
      expect(r.state).toBe('unseen');
      expect(r.doubtSince).toBeGreaterThanOrEqual(now);
      expect(r.nextPollAt).toBeGreaterThan(Date.now() + 30_000); // not before the poll interval plus 30 s
    }

    // Missing for a minute and more: the old order ends review; the other is still within its time.
    rt.db.prepare(`UPDATE rows SET doubt_since = ?, next_poll_at = 0 WHERE idx = 0`).run(Date.now() - 61_000);
    rt.db.prepare(`UPDATE rows SET next_poll_at = 0 WHERE idx = 1`).run();
    expect((await poller.round(rt.rows.duePolls(['b1'], Date.now(), 10), 2, false)).updated).toBe(1);
    const old = rt.rows.get('b1', 0)!;
    expect(old.state).toBe('review');
    expect(old.error).toMatch(/^REVIEW: the API gave order ORD-old for this row but has not found it since .*; ask the supplier/);
    expect(rt.rows.get('b1', 1)!.state).toBe('unseen');
  });

  it('an order that shows up again (here in history) stops the clock', async () => {
    const shown = new Set<string>();
    const { rt } = await world(shown);
    placed(rt, 0, 'ORD-a', Date.now() - 1_000);
    placed(rt, 1, 'ORD-b', Date.now() - 1_000);
    const poller = new Poller(rt, rt.account);
    await poller.round(rt.rows.duePolls(['b1'], Date.now(), 10), 2, false);
    expect(rt.rows.get('b1', 0)!.doubtSince).not.toBeNull();
    shown.add('ORD-a');
    rt.db.prepare(`UPDATE rows SET next_poll_at = 0`).run();
    await poller.round(rt.rows.duePolls(['b1'], Date.now(), 10), 2, false);
    expect(rt.rows.get('b1', 0)).toMatchObject({ state: 'processing', doubtSince: null });
    expect(rt.rows.get('b1', 1)!.doubtSince).not.toBeNull();
  });
});
