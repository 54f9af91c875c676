/**
 * Found by the simulator's `restore` operator action (seed 4 #27; replay in
 * test/sim/found/restore-journal-order-took-stock.json): an API order for game keys, answered 202
 * after the copy was taken, bought at once, and taking the last of the pack's stock. The store lost
 * (restored from the older copy, or deleted), the first start accepted the journal's orders again,
 * and validated this one against the catalog as a new order: "out of stock" (or "must be 1 for this
 * pack": the catalog's quantityMax follows the stock), so it was refused, held by no row, and the
 * shop's order (202, bought, its codes delivered) read 404 for ever; the report listed it as
 * "needs a person: not accepted again: … out of stock", untrue of a purchase already made.
 * The real daemon with its order API, a real sandbox, the store deleted between two starts.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, tempHome, waitFor } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const TOKEN = 'restore-test-order-api-token-0123456789';

describe('an accepted API order that took the last of the stock, and a lost store', () => {
  it('is accepted again from the journal and settled from its purchase, not refused as out of stock', async () => {
    const home = tempHome('journal-stock-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
    // KEY-PUBG-660: 3 codes in stock (the sandbox's default catalog); the order takes all three.
    const body = { trxid: 'KEYS-ALL', pid: 'KEY-PUBG-660', quantity: 3, queue: true };
    const status = async (d: Awaited<ReturnType<typeof start>>) => d.call('GET', '/api/v1/orders/KEYS-ALL', {});

    const first = await start(env);
    expect((await first.call('POST', '/api/v1/orders', { body })).status).toBe(202);
    const bought = await waitFor('KEYS-ALL completed', async () => {
      const r = await status(first);
      return r.json?.status === 'completed' ? r.json : undefined;
    }, 60_000, 100);
    await first.daemon.stop();
    expect(sb.admin.ledger().orders.map((o) => o.trxid)).toEqual(['KEYS-ALL']);

    for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
    const second = await start(env);
    try {
      await waitFor('the reconcile-first start done', () => /sending starts now/.test(second.daemon.output()), 60_000);
      const again = await waitFor('KEYS-ALL read', async () => {
        const r = await status(second);
        return r.status === 404 || r.json?.status === 'completed' ? r : undefined;
      }, 30_000, 100);
      expect(again.status, JSON.stringify(again.json)).toBe(200);
      expect(again.json?.status).toBe('completed');
      expect(again.json?.orderId).toBe(bought.orderId);
      expect(second.daemon.output()).not.toMatch(/out of stock/);
    } finally {
      await second.daemon.stop();
    }
    // Bought once: the order found by its trxid, never sent again.
    expect(sb.admin.ledger().orders.map((o) => o.trxid)).toEqual(['KEYS-ALL']);
  }, 240_000);
});
