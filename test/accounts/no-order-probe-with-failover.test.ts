/**
 * Issue 30 (a new-user trial): two sandbox accounts, cheapest routing, the cheaper one in
 * MAINTENANCE. One API order routed to it was sent there again and again (8 refused POST /orders in
 * 27 s: the maintenance back-off of 1, 2, 3, 5, 5 … s let one order through as a probe each time)
 * until max_queue_delay moved it to the other account, and the shop's webhook receiver got one
 * `order.accepted` / `order.sent` pair per refused send. With several accounts a maintenance pause
 * is probed by a read on a schedule, never by an order (README, docs/accounts.md): the paused
 * account gets the one order that met the maintenance, the row waits max_queue_delay and moves on.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { start as startWithConsole } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccounts } from '../accounts/two-sandboxes.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

const TOKEN = 'pause-no-order-probe-token-0123456789';
const postsTo = (sb: RunningSandbox) => sb.admin.calls().filter((c) => c.method === 'POST' && c.route.includes('orders')).length;

function eventsOf(dbPath: string, trxid: string): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    // By row: a move to another account gives the order a new trxid for the supplier.
    const row = db.prepare('SELECT batch_id, idx FROM order_events WHERE trxid = ? ORDER BY id LIMIT 1').get(trxid) as { batch_id: string; idx: number };
    return (db.prepare('SELECT type FROM order_events WHERE batch_id = ? AND idx = ? ORDER BY id').all(row.batch_id, row.idx) as { type: string }[]).map((e) => e.type);
  } finally {
    db.close();
  }
}

describe('a paused account of several gets no order as a probe', () => {
  it('maintenance on the cheaper account: one refused send there, then the order waits max_queue_delay and completes on the other', async () => {
    // max_queue_delay 6 s: long enough for the back-off's order probes (after 1, 2 and 3 s) to show;
    // the read probe's interval (six poll intervals: 18 s) is longer, so no trial order falls in it.
    const { home, a, b, env } = await twoAccounts({ extra: 'max_queue_delay = "6s"', env: { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_POLL_INTERVAL_MS: '3000' } });
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const d = await startWithConsole(env);
    try {
      const r = await d.call('POST', '/api/v1/orders', { body: { trxid: 'SHOP-1003', pid: 'PUBG-60', userId: '5123456700' } });
      expect(r.status).toBe(202);
      await expect.poll(async () => (await d.call('GET', '/api/v1/orders/SHOP-1003')).json?.status, { timeout: 60_000, interval: 200 }).toBe('completed');
      const refused = postsTo(b);
      const events = eventsOf(join(home.jobs, 'topup.db'), 'SHOP-1003');
      console.log(`POST /orders to the paused account: ${refused}; events: ${events.join(' ')}`);
      expect(refused).toBe(1);
      expect(b.admin.ledger().orders).toHaveLength(0);
      expect(a.admin.ledger().orders.map((o) => o.trxid)).toHaveLength(1);
      // One pair for the refused send, none more (before: one per order probe), then the order's end.
      expect(events.filter((e) => e === 'order.sent')).toHaveLength(2);
      expect(events.filter((e) => e === 'order.accepted')).toHaveLength(2);
      expect(events.at(-1)).toBe('order.completed');
    } finally {
      await d.daemon.stop();
    }
  }, 120_000);
});
