/**
 * Issue 30 (7): `topup webhooks` said there was no webhook URL when only the daemon's environment
 * had it. Now, without the URL in its own environment, it shows where the daemon last sent an
 * event (from the store), and with neither says where it looked.
 *
 * Real parts: the real daemon (dist/cli.js) with TOPUP_ORDER_WEBHOOK_URL pointing at a real
 * receiver, an API order accepted by the real desk, the events delivered; then the real CLI run
 * with an environment that lacks the URL.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime } from '../../src/runtime.js';
import { createOrderDesk } from '../../src/orders/desk.js';
import { openDb } from '../../src/store/db.js';
import { TEST_KEY, cliEnv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { SECRET, eventsOf, receiver } from '../webhooks/helpers.js';

releaseAfterEach();
const receivers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

describe('topup webhooks without the URL in its own environment', () => {
  it('shows where the daemon sent the events; with no event sent, says where it looked', async () => {
    const home = tempHome('topup-hooks-target-');
    const sb = await inProcessSandbox();
    const plain = cliEnv(home, sb);
    const none = await runCli(['webhooks'], plain);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/^webhooks: no TOPUP_ORDER_WEBHOOK_URL in this command's environment, and no event in the store was sent to one\n/);

    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
    expect((await createOrderDesk(rt, () => {}).accept({ trxid: 'HOOK-T-1', pid: 'PUBG-60', userId: '5123456701' })).kind).toBe('accepted');
    rt.batches.releaseAll(rt.owner);
    await rt.close();

    const r = await receiver();
    receivers.push(r);
    const hook = `${r.url}?token=shop-secret`;
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_ORDER_WEBHOOK_URL: hook, TOPUP_ORDER_WEBHOOK_SECRET: SECRET }));
    const db = openDb(join(home.jobs, 'topup.db'));
    try {
      // The order's last event delivered: no event comes after it to move "the latest".
      await waitFor('every event delivered, the order completed', () => {
        const ev = eventsOf(db);
        return ev.some((e) => e.type === 'order.completed') && ev.every((e) => e.delivery === 'delivered');
      }, 40_000, 100);
      const last = eventsOf(db).filter((e) => e.url !== null).at(-1)!;
      const shown = await runCli(['webhooks'], plain);
      expect(shown.stdout.split('\n')[0]).toBe(`webhooks: to ${hook.replace('?token=shop-secret', '?…')} (where the daemon sent evt_${last.id}, the latest event; this command's environment has no TOPUP_ORDER_WEBHOOK_URL: the daemon's own has it, e.g. /etc/topup/topup.env)`);
      expect(shown.stdout).not.toContain('shop-secret');
      const json = JSON.parse((await runCli(['webhooks', '--json'], plain)).stdout);
      expect(json.target).toMatchObject({ source: 'last-delivery', event: `evt_${last.id}`, daemonPid: daemon.child.pid });
    } finally {
      db.close();
      await daemon.stop();
    }
  }, 120_000);
});
