/**
 * Adversarial review 8 (issue 23), security (scopes): a token with only `orders:write` reads any
 * API order whose trxid it knows or guesses (shop trxids are often invoice numbers: SHOP-1001,
 * SHOP-1002 …). docs/order-api.md gives reading an order to `orders:read` only, but POST
 * /api/v1/orders with that trxid and ANY other body answers `409 TRXID_CONFLICT` whose `order`
 * member is the whole order view: player ids, meta (the shop's own data), the supplier's order id,
 * money, status and history. Nothing is stored, so probing is free and silent.
 * A correct system shows the existing order in a 409 only to a token that may read orders
 * (orders:read), and otherwise answers the code alone (TRXID_CONFLICT tells a writer all it needs:
 * a new purchase needs a new trxid).
 */
import { describe, expect, it } from 'vitest';
import { runCli, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { shop, start } from '../e2e/daemon.js';

releaseAfterEach();

describe('a token with orders:write only', () => {
  it('cannot read an order (GET is 403, and a conflicting POST does not return the order)', async () => {
    const { env } = await shop();
    const { daemon, call } = await start(env);
    try {
      const secretMeta = { customerEmail: 'alice@example.com', shopOrder: 'A-1001' };
      const placed = await call('POST', '/api/v1/orders', { body: { trxid: 'SHOP-1001', pid: 'PUBG-60', userId: '5123456701', meta: secretMeta } });
      expect(placed.status, placed.text).toBe(202);
      await waitFor('the order completed', async () => (await call('GET', '/api/v1/orders/SHOP-1001')).json?.status === 'completed', 30_000, 100);

      const made = await runCli(['token', 'create', '--scope', 'orders:write', '--name', 'checkout-bot'], env);
      expect(made.code, made.stderr).toBe(0);
      const writer = made.stdout.split('\n')[0]!;
      // The documented rule holds for GET:
      const get = await call('GET', '/api/v1/orders/SHOP-1001', { token: writer });
      expect(get.status).toBe(403);
      // … but a POST of that trxid with a body of the writer's choosing answers the order.
      const probe = await call('POST', '/api/v1/orders', { token: writer, body: { trxid: 'SHOP-1001', pid: 'PUBG-60', userId: '1' } });
      expect(probe.status).toBe(409);
      expect(probe.json.code).toBe('TRXID_CONFLICT');
      expect(JSON.stringify(probe.json)).not.toContain('alice@example.com');
      expect(JSON.stringify(probe.json)).not.toContain('5123456701');
      expect(probe.json.order).toBeUndefined();
    } finally {
      await daemon.stop();
    }
  }, 90_000);
});
