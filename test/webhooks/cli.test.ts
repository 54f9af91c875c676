/** `topup webhooks` and `topup webhooks replay`, the real CLI on a real home, without a daemon. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { cliEnv, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { SECRET, apiBatch, apiOrder, eventsOf, move } from './helpers.js';

releaseAfterEach();

describe('topup webhooks', () => {
  it('shows counts, the oldest pending with its last error and the failed ones; replay sets them back to pending', async () => {
    const home = tempHome();
    const db = openDb(join(home.jobs, 'topup.db'));
    const b = apiBatch(db);
    apiOrder(db, b, 0, 'cli-a');
    move(db, b, 0, 'sending');
    apiOrder(db, b, 1, 'cli-b');
    db.prepare("UPDATE order_events SET delivery = 'delivered' WHERE id = 1").run();
    db.prepare("UPDATE order_events SET delivery = 'failed', attempts = 20, last_status = 500, last_error = 'HTTP 500' WHERE id = 2").run();
    db.prepare("UPDATE order_events SET attempts = 3, last_error = 'connection refused (ECONNREFUSED)' WHERE id = 3").run();
    const env = cliEnv(home, null, { TOPUP_ORDER_WEBHOOK_URL: 'https://shop.example.com/hooks?token=abc', TOPUP_ORDER_WEBHOOK_SECRET: SECRET });

    const shown = await runCli(['webhooks'], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('events: 1 pending, 1 delivered, 1 failed, 0 with no URL');
    expect(shown.stdout).toMatch(/oldest pending: evt_3 \(cli-b, order.accepted\) .* 3 attempts, last error: connection refused/);
    expect(shown.stdout).toMatch(/evt_2 +cli-a +order.sent/);
    // The URL's query (a token, maybe) is never printed; the secret neither.
    expect(shown.stdout).toContain('https://shop.example.com/hooks?…');
    expect(shown.stdout + shown.stderr).not.toContain('token=abc');
    expect(shown.stdout + shown.stderr).not.toContain(SECRET);

    const asJson = JSON.parse((await runCli(['webhooks', '--json'], env)).stdout);
    expect(asJson.counts).toEqual({ pending: 1, delivered: 1, failed: 1, none: 0 });
    expect(asJson.failed.map((e: { id: string }) => e.id)).toEqual(['evt_2']);

    expect((await runCli(['webhooks', 'replay'], env)).code).not.toBe(0);
    expect((await runCli(['webhooks', 'replay', 'evt_x'], env)).stderr).toContain('not an event id');
    const failed = await runCli(['webhooks', 'replay', '--failed'], env);
    expect(failed.stdout).toContain('replayed 1 event;');
    expect(eventsOf(db).map((e) => e.delivery)).toEqual(['delivered', 'pending', 'pending']);
    const byId = await runCli(['webhooks', 'replay', 'evt_1', '3'], env);
    expect(byId.stdout).toContain('replayed 1 event (1 already pending');
    db.prepare("UPDATE order_events SET delivery = 'delivered'").run();
    expect((await runCli(['webhooks', 'replay', '--trxid', 'CLI-A'], env)).stdout).toContain('replayed 2 events;');
    db.prepare("UPDATE order_events SET delivery = 'delivered'").run();
    expect((await runCli(['webhooks', 'replay', '--since', 'evt_2'], env)).stdout).toContain('replayed 2 events;');
    expect(eventsOf(db).map((e) => [e.delivery, e.next_attempt_at, e.attempts])).toEqual([['delivered', 0, 0], ['pending', 0, 0], ['pending', 0, 0]]);
    db.close();
  });
});
