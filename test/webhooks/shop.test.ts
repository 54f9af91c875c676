/**
 * examples/shop as a shop would run them (examples/shop/README.md), against the real daemon with its
 * order API and webhooks: each script checks the player (POST /players/check) and shows the name
 * before it places the order over HTTP (202), then prints that order's every change as its verified
 * webhooks arrive, in order, to completed; the same trxid placed again answers the same order (200),
 * and nothing is bought twice. A player the supplier says does not exist is never ordered.
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

function runShop(cmd: string, script: string, trxid: string, env: NodeJS.ProcessEnv, ...more: string[]): { out: () => string; child: ChildProcess } {
  const child = spawn(cmd, [join(SHOP, script), trxid, ...more], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
      // The name first, before any money: then the order, checked again from the kept answer.
      expect(lines[1]).toMatch(/^POST \/api\/v1\/players\/check: 200 \{"found":true,"check":"pubg"/);
      expect(lines[2]).toMatch(/^player: [A-Z][a-z]+[A-Z][a-z]+\d+ \(shown to the buyer, who confirms and pays\)$/);
      expect(lines[3]).toMatch(new RegExp(`^POST /api/v1/orders: 202 \\{.*"trxid":"${trxid}".*"playerName":"[A-Za-z0-9]+"`));
      const events = lines.slice(4);
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
    // One check call for the one player, whichever script asked and however often.
    expect(sb.admin.calls().filter((c) => c.route === 'POST /pubgvvfy')).toHaveLength(1);

    // A player the supplier does not know: the scripts say so and order nothing.
    again.child.kill('SIGKILL');
    await new Promise((resolve) => again.child.once('exit', resolve));
    for (const [cmd, script, trxid] of [['python3', 'shop.py', 'SHOP-PY-2'], [process.execPath, 'shop.mjs', 'SHOP-JS-2']] as const) {
      const nobody = runShop(cmd, script, trxid, env, '99999');
      await waitFor(`${script}: refused`, () => nobody.out().includes('not ordered'), 20_000, 50);
      expect(nobody.out()).toMatch(/POST \/api\/v1\/players\/check: 422 \{.*"code":"PLAYER_NOT_FOUND"/);
      expect(nobody.out()).toContain('no player 99999: not ordered (ask the buyer to correct the id)');
      expect(nobody.out()).not.toContain('POST /api/v1/orders');
      nobody.child.kill('SIGKILL');
      await new Promise((resolve) => nobody.child.once('exit', resolve));
    }
    expect(sb.admin.ledger().orders.filter((o) => o.userId === '99999')).toHaveLength(0);
    expect(await daemon.stop()).toBe(0);
  }, 150_000);
});
