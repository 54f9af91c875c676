/**
 * Trial s34, defect 2: one account in MAINTENANCE. An API order was sent again every ~5 s (8
 * refused POST /orders in 30 s: the order probe's back-off of 1, 2, 3, 5, 5 … s never grew) and the
 * shop's webhook receiver got an `order.accepted` / `order.sent` pair for every refused send. With
 * one account the order probe backs off like the read probe (docs/accounts.md), and an order once
 * sent stays `sent` until it is placed or ends (docs/order-api.md): no flip-flop per probe.
 * The real sandbox, the daemon, and a webhook receiver counting what it is sent.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { shop, start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const SECRET = 'pausefix-webhook-secret-0123456789abcdef';

describe('one account in maintenance', () => {
  it('the order probe backs off and the shop sees no accepted/sent flip per probe', async () => {
    const got: { type: string; status: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        try {
          const e = JSON.parse(body) as { type: string; data: { trxid: string; status: string } };
          if (e.data?.trxid === 'MAINT-1') got.push({ type: e.type, status: e.data.status });
        } catch { /* not an event */ }
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const { sb, env } = await shop({ TOPUP_ORDER_WEBHOOK_URL: hook, TOPUP_ORDER_WEBHOOK_SECRET: SECRET, TOPUP_POLL_INTERVAL_MS: '1000' });
    sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const d = await start(env, { started: true });
    try {
      const posts = () => sb.admin.calls().filter((c) => c.method === 'POST' && c.route.includes('orders')).length;
      const r = await d.call('POST', '/api/v1/orders', { body: { trxid: 'MAINT-1', pid: 'PUBG-60', userId: '5123456700' } });
      expect(r.status).toBe(202);
      await new Promise((res) => setTimeout(res, 30_000));
      const refused = posts();
      const flips = got.map((e) => e.type);
      console.log(`refused POST /orders in 30 s: ${refused}; webhooks: ${flips.join(' ')}`);
      // 0, 1, 3, 13 s (then 33 s): before, 0, 1, 3, 6, 11, 16, 21, 26 s.
      expect(refused).toBeGreaterThanOrEqual(2);
      expect(refused).toBeLessThanOrEqual(4);
      expect(flips).toEqual(['order.accepted', 'order.sent']);
      expect((await d.call('GET', '/api/v1/orders/MAINT-1')).json?.status).toBe('sent');
      sb.admin.setFaults({ maintenance: null });
      await expect.poll(async () => (await d.call('GET', '/api/v1/orders/MAINT-1')).json?.status, { timeout: 60_000, interval: 250 }).toBe('completed');
      expect(sb.admin.ledger().orders).toHaveLength(1);
    } finally {
      await d.daemon.stop();
      receiver.close();
    }
  }, 150_000);
});
