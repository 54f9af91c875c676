/**
 * Adversarial review 8 (issue 23), money: `topup retry` of a finished day's API batch buys the
 * shop's `rejected` orders again, under new trxids (retry:<batch>:<idx>), in a file batch of its
 * own. The shop was told `rejected` (final: "nothing was bought") by the API and by its webhook,
 * so it has refunded its customer or placed the purchase again under a trxid of its own; the
 * retry's purchase is never told to it (the retry's rows are not API orders: no event, the order
 * still reads `rejected`). The player gets the pack twice (or the shop pays for one it refunded).
 * A correct system does not let an operator re-buy a shop's orders behind its back: `topup retry`
 * of an API batch is refused (or leaves its API orders out, naming why): a shop re-orders itself.
 *
 * The day passing is stood in for by moving the batch's api_day to yesterday while the daemon is
 * stopped (the daemon's clock cannot be moved): the restarted daemon then finishes it as it would a
 * minute after midnight.
 */
import Database from 'better-sqlite3';
import { registerIdentity } from '../../src/kernel/identity.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { shop, start } from '../e2e/daemon.js';

releaseAfterEach();

describe('topup retry of the order API batch', () => {
  it('does not buy again an order the shop was told was rejected', async () => {
    const { home, sb, env } = await shop({ TOPUP_CATALOG_MAX_AGE_MS: '600000' });
    const envCached = env;
    let first = await start(envCached);
    let batchId = '';
    try {
      // Warm the daemon's catalog (and the desk's placer) with a first order.
      const warm = await first.call('POST', '/api/v1/orders', { body: { trxid: 'ADV8-R-1', pid: 'PUBG-60', userId: '5123456701' } });
      expect(warm.status, warm.text).toBe(202);
      batchId = warm.json.batchId;
      await waitFor('the first order completed', async () => (await first.call('GET', '/api/v1/orders/ADV8-R-1')).json?.status === 'completed', 30_000, 100);
      // The supplier stops selling the pack; the cached catalog still lists it: the next order is
      // accepted, sent, refused with nothing created: `rejected`.
      sb.admin.setProduct({ id: 'PUBG-60', status: 'inactive' });
      const r = await first.call('POST', '/api/v1/orders', { body: { trxid: 'ADV8-R-2', pid: 'PUBG-60', userId: '5123456702' } });
      expect(r.status, r.text).toBe(202);
      const told = await waitFor('the order rejected', async () => {
        const o = (await first.call('GET', '/api/v1/orders/ADV8-R-2')).json;
        return o?.status === 'rejected' ? o : undefined;
      }, 30_000, 100);
      expect(told.history.at(-1)).toMatchObject({ type: 'order.rejected', status: 'rejected' });
    } finally {
      await first.daemon.stop();
    }
    // A day later (see the top).
    const db = new Database(join(home.jobs, 'topup.db'));
    registerIdentity(db); // a connection that writes the home's tables needs the trxid fold its indexes use
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    db.prepare('UPDATE batches SET api_day = ? WHERE id = ?').run(yesterday, batchId);
    db.close();
    sb.admin.setProduct({ id: 'PUBG-60', status: 'active' });
    first = await start(envCached);
    try {
      await waitFor('the API batch finished', async () => {
        const st = await runCli(['status', '--json'], env);
        return st.stdout.includes(batchId) && !(JSON.parse(st.stdout).batches as { id: string; state: string }[]).some((b) => b.id === batchId && b.state !== 'done');
      }, 30_000, 200).catch(() => undefined);
      const retry = await runCli(['retry', batchId], env, { timeoutMs: 60_000 });
      // A correct system refuses (or retries nothing of the shop's orders).
      const purchases = () => sb.admin.ledger().orders.filter((o) => JSON.stringify(o).includes('5123456702'));
      // Given the time to buy it (a retry's batch is sent within seconds by the running daemon).
      await waitFor('a purchase for the rejected order', () => purchases().length > 0, 20_000, 100).catch(() => undefined);
      const bought = purchases();
      const order = (await first.call('GET', '/api/v1/orders/ADV8-R-2')).json;
      expect({ retryExit: retry.code, purchasesForTheRejectedOrder: bought.length, shopSees: order.status }).toEqual({ retryExit: expect.any(Number), purchasesForTheRejectedOrder: 0, shopSees: 'rejected' });
    } finally {
      await first.daemon.stop();
    }
  }, 120_000);
});
