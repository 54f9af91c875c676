/**
 * examples/shop as a shop would run them (examples/shop/README.md), against the real daemon with its
 * order API and webhooks: each script places an order over HTTP (202), then prints that order's
 * every change as its verified webhooks arrive, in order, to completed; the same trxid placed again
 * answers the same order (200), and nothing is bought twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, cliEnv, inProcessSandbox, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { SECRET, receiver } from './helpers.js';

releaseAfterEach();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

const TOKEN = 'shop-example-order-api-token-0123456789';
const SHOP = join(ROOT, 'examples', 'shop');

function runShop(cmd: string, script: string, trxid: string, env: NodeJS.ProcessEnv): { out: () => string; child: ChildProcess } {
  const child = spawn(cmd, [join(SHOP, script), trxid], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { out: () => out, child };
}

describe('examples/shop against the real daemon', () => {
  it('shop.py and shop.mjs each place an order and print its verified webhooks to completed', async () => {
    const probe = await receiver();
    const port = probe.port;
    await probe.close();
    const home = tempHome('topup-shop-');
    const sb = await inProcessSandbox();
    const daemon = startDaemon(cliEnv(home, sb, {
      TOPUP_CONSOLE: '127.0.0.1:0',
      TOPUP_ORDER_API_TOKEN: TOKEN,
      TOPUP_ORDER_WEBHOOK_URL: `http://127.0.0.1:${port}/topup`,
      TOPUP_ORDER_WEBHOOK_SECRET: SECRET,
    }));
    const api = await consoleUrl(daemon);
    const env = { PATH: process.env.PATH, TOPUP_API: api, TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_ORDER_WEBHOOK_SECRET: SECRET, SHOP_PORT: String(port) };

    for (const [cmd, script, trxid] of [['python3', 'shop.py', 'SHOP-PY-1'], [process.execPath, 'shop.mjs', 'SHOP-JS-1']] as const) {
      const shop = runShop(cmd, script, trxid, env);
      await waitFor(`${script}: ${trxid} completed`, () => shop.out().includes(`${trxid} is completed`), 60_000, 50);
      const lines = shop.out().trim().split('\n');
      expect(lines[0]).toBe(`webhooks: listening on http://127.0.0.1:${port}/topup`);
      expect(lines[1]).toMatch(new RegExp(`^POST /api/v1/orders: 202 \\{.*"trxid":"${trxid}"`));
      const events = lines.slice(2);
      expect(events[0]).toMatch(new RegExp(`^evt_\\d+ order.accepted: ${trxid} is `));
      expect(events.at(-1)).toMatch(new RegExp(`^evt_\\d+ order.completed: ${trxid} is completed \\(order ORD\\d+\\)$`));
      expect(events.every((l) => /^evt_\d+ order\.\w+: /.test(l))).toBe(true);
      const ids = events.map((l) => Number(/^evt_(\d+)/.exec(l)![1]));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      shop.child.kill('SIGKILL');
      await new Promise((resolve) => shop.child.once('exit', resolve));
    }

    // The same trxid again: the same order (200), not a second purchase.
    const again = runShop('python3', 'shop.py', 'SHOP-PY-1', env);
    await waitFor('the second POST answered', () => again.out().includes('POST /api/v1/orders:'), 20_000, 50);
    expect(again.out()).toMatch(/POST \/api\/v1\/orders: 200 \{.*"status":"completed"/);
    expect(sb.admin.ledger().orders.filter((o) => o.trxid === 'SHOP-PY-1')).toHaveLength(1);
    expect(sb.admin.ledger().orders.filter((o) => o.trxid === 'SHOP-JS-1')).toHaveLength(1);
    expect(await daemon.stop()).toBe(0);
  }, 150_000);
});
