/**
 * Issue 30 (the lead's note, stop 33): an account problem (401/403) let one order through as a
 * probe after each back-off (six poll intervals), as maintenance did before it was fixed
 * (no-order-probe-with-failover.test.ts). The read probe (GET /balance with the same key, on the same
 * schedule) already proves whether the key and the account work: spec §5's 401/403 codes answer
 * every route. An order adds nothing but a refused POST /orders per interval, and an answer that
 * cannot prove "not created" (a redirect, a 404 page) would leave the probing row in doubt. So
 * no home, with one account or several, probes an account problem with an order: the read probe
 * lifts it and the rows go at once.
 */
import { describe, expect, it } from 'vitest';
import { start, shop } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccounts } from '../accounts/two-sandboxes.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

const TOKEN = 'account-problem-no-order-probe-token-0123';
const posts = (sb: RunningSandbox) => sb.admin.calls().filter((c) => c.method === 'POST' && c.route.includes('orders')).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Probe interval: six poll intervals, at least 2 s (account/account.ts): 3 s here.
const POLL_MS = '500';
const PROBE_MS = 3_000;

async function restrictedWhileQueued(sb: RunningSandbox, d: Awaited<ReturnType<typeof start>>, body: Record<string, unknown>): Promise<{ refused: number }> {
  // The order is accepted and sent while the account is in maintenance (reads answer, orders are
  // refused with 503: nothing created), so it is queued on the account; then the account turns
  // restricted (403 on every route) and the maintenance ends.
  sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
  const r = await d.call('POST', '/api/v1/orders', { body });
  expect(r.status, r.text).toBe(202);
  await expect.poll(() => sb.admin.calls().some((c) => c.method === 'POST' && c.status === 503), { timeout: 30_000, interval: 100 }).toBe(true);
  sb.admin.setAccount({ state: 'restricted' });
  sb.admin.setFaults({ maintenance: null });
  // From the first 403 (an order probe of the maintenance, or a read probe): the account problem.
  await expect.poll(() => sb.admin.calls().some((c) => c.status === 403), { timeout: 60_000, interval: 100 }).toBe(true);
  const before = posts(sb);
  // Three probe intervals and a half: an order probe after each back-off would show as 3 more sends.
  await sleep(PROBE_MS * 3.5);
  const refused = posts(sb) - before;
  expect(sb.admin.ledger().orders).toHaveLength(0);
  // The key works again: the read probe (within one interval) lifts the pause and the order goes.
  sb.admin.setAccount({ state: 'active' });
  await expect.poll(async () => (await d.call('GET', `/api/v1/orders/${String(body.trxid)}`)).json?.status, { timeout: PROBE_MS * 4, interval: 200 }).toBe('completed');
  return { refused };
}

describe('an account problem is probed by a read, never an order', () => {
  it('several accounts: the restricted account gets no order probe; it sends again once a read answers', async () => {
    const { b, env } = await twoAccounts({ extra: 'max_queue_delay = "10m"', env: { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_POLL_INTERVAL_MS: POLL_MS } });
    const d = await start(env, { started: true });
    try {
      const { refused } = await restrictedWhileQueued(b, d, { trxid: 'SHOP-2001', pid: 'PUBG-60', userId: '5123456700', account: 'second' });
      console.log(`POST /orders to the restricted account in ${(PROBE_MS * 3.5) / 1000} s: ${refused}`);
      expect(refused).toBe(0);
      expect(b.admin.ledger().orders.map((o) => o.trxid)).toEqual(['SHOP-2001']);
    } finally {
      await d.daemon.stop();
    }
  }, 120_000);

  it('one account: no order probe either; the read probe lifts the pause', async () => {
    const s = await shop({ TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_POLL_INTERVAL_MS: POLL_MS });
    const d = await start(s.env, { started: true });
    try {
      const { refused } = await restrictedWhileQueued(s.sb, d, { trxid: 'SHOP-2002', pid: 'PUBG-60', userId: '5123456700' });
      console.log(`POST /orders to the restricted account in ${(PROBE_MS * 3.5) / 1000} s: ${refused}`);
      expect(refused).toBe(0);
      expect(s.sb.admin.ledger().orders.map((o) => o.trxid)).toEqual(['SHOP-2002']);
    } finally {
      await d.daemon.stop();
    }
  }, 120_000);
});
