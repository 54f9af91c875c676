/**
 * End to end with the real daemon (dist/cli.js) and the in-process sandbox: an API order (accepted
 * by the real desk, in this test's process, as a second process on the home would) is sent and
 * completed by the daemon, and its every change of status reaches a real receiver, signed, in
 * order, although the receiver was down when the first ones were due. Then the console's Webhooks
 * page: counts, a failed event with its Replay button, the replay (audited) posted again by the
 * daemon, and /metrics' webhook gauges.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime } from '../../src/runtime.js';
import { createOrderDesk } from '../../src/orders/desk.js';
import { openDb } from '../../src/store/db.js';
import { verify } from '../../src/webhooks/signer.js';
import { TEST_KEY, cliEnv, inProcessSandbox, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client } from '../console/helpers.js';
import { SECRET, eventsOf, receiver } from './helpers.js';

releaseAfterEach();
const receivers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

/** A home with one API order accepted by the real desk (as the order API does), its batch let go. */
async function homeWithOrder(trxid: string) {
  const home = tempHome('topup-hooks-');
  const sb = await inProcessSandbox();
  const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  const a = await createOrderDesk(rt, () => {}).accept({ trxid, pid: 'PUBG-60', userId: '5123456701', meta: { shopOrder: 1 } });
  expect(a.kind).toBe('accepted');
  rt.batches.releaseAll(rt.owner);
  await rt.close();
  return { home, sb };
}

describe('webhooks from the real daemon', () => {
  it('every change of an API order reaches the receiver, signed and in order, across an outage; the console shows and replays them', async () => {
    // A port that is free now: the receiver is down when the first events are due.
    const probe = await receiver();
    const port = probe.port;
    await probe.close();
    const url = `http://127.0.0.1:${port}/hooks`;
    // The order, accepted by the real desk (as the order API does) before the daemon starts: the
    // daemon takes the day's batch at its first look, as after a restart.
    const { home, sb } = await homeWithOrder('HOOK-1');
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_ORDER_WEBHOOK_URL: url, TOPUP_ORDER_WEBHOOK_SECRET: SECRET }));
    const address = await consoleUrl(daemon);
    const c = { home, daemon, url: address };

    const db = openDb(join(c.home.jobs, 'topup.db'));
    try {
      // The daemon sends and completes it while nobody listens: the events wait, retried.
      await waitFor('the order completed', () => eventsOf(db).some((e) => e.type === 'order.completed'), 40_000, 100);
      await waitFor('a failed attempt', () => eventsOf(db).some((e) => e.last_error?.includes('ECONNREFUSED')), 10_000, 50);
      expect(eventsOf(db).every((e) => e.delivery === 'pending')).toBe(true);

      const r = await receiver(port);
      receivers.push(r);
      await waitFor('every event delivered', () => eventsOf(db).every((e) => e.delivery === 'delivered'), 40_000, 100);
      const types = eventsOf(db).map((e) => e.type);
      expect(types[0]).toBe('order.accepted');
      expect(types.at(-1)).toBe('order.completed');
      // Each event once (the receiver answered 200 every time), in the order they happened, each verified.
      expect(r.received.map((x) => x.event.type)).toEqual(types);
      for (const got of r.received) {
        expect(verify(String(got.headers['topup-signature']), got.body, SECRET).ok).toBe(true);
        expect(got.headers['topup-event-id']).toBe(got.event.id);
        expect(got.event.data).toMatchObject({ trxid: 'HOOK-1', meta: { shopOrder: 1 } });
      }
      const last = r.received.at(-1)!.event as unknown as { data: { status: string; codes?: unknown; orderId: string | null } };
      expect(last.data.status).toBe('completed');
      expect(last.data.orderId).not.toBeNull();
      // Codes only with TOPUP_ORDER_WEBHOOK_CODES=1.
      expect(last.data.codes).toBeUndefined();

      // The console: one event given up (as after 26 h), then replayed from the page.
      db.prepare("UPDATE order_events SET delivery = 'failed', last_error = 'HTTP 500', last_status = 500 WHERE id = 1").run();
      const web = new Client(c.url);
      const pg = await web.get('/webhooks');
      expect(pg.status).toBe(200);
      expect(pg.text).toContain('href="/webhooks" aria-current="page"');
      expect(pg.text).toMatch(/data-count="failed">1</);
      expect(pg.text).toContain('data-event="evt_1"');
      expect(pg.text).toContain('HTTP 500');
      expect(pg.text).not.toContain(SECRET);
      const metrics = await web.get('/metrics');
      expect(metrics.text).toMatch(/topup_webhook_events\{delivery="failed"\} 1/);
      expect(metrics.text).toMatch(/topup_webhook_oldest_pending_age_seconds 0/);
      // Without the form token: refused.
      expect((await web.post('/webhooks/replay', { event: 'evt_1' }, { csrf: null })).status).toBe(403);
      const before = r.received.length;
      const replay = await web.post('/webhooks/replay', { event: 'evt_1' });
      expect(replay.status).toBe(303);
      expect(replay.headers.get('location')).toContain('/webhooks?replayed=1');
      await waitFor('the replayed event posted again', () => r.received.length > before, 10_000, 50);
      expect(r.received.at(-1)!.event.id).toBe('evt_1');
      await waitFor('the replayed event recorded as delivered', () => eventsOf(db)[0]!.delivery === 'delivered', 5_000, 20);
      const audit = await web.get('/audit');
      expect(audit.text).toContain('webhook replay');
      expect(audit.text).toContain('webhook evt_1: 1 replayed');
    } finally {
      db.close();
    }
    expect(await c.daemon.stop()).toBe(0);
    expect(c.daemon.output()).not.toContain(SECRET);
  }, 150_000);

  it('a daemon killed (SIGKILL) while a post hangs posts that event again after its restart: at least once, nothing lost', async () => {
    const r = await receiver(0, () => 'hang');
    receivers.push(r);
    const { home, sb } = await homeWithOrder('KILL-1');
    const env = cliEnv(home, sb, { TOPUP_ORDER_WEBHOOK_URL: r.url, TOPUP_ORDER_WEBHOOK_SECRET: SECRET });
    const first = startDaemon(env);
    await waitFor('the first event in flight', () => r.received.length === 1, 30_000, 20);
    const killedAt = Date.now();
    await first.kill();
    const db = openDb(join(home.jobs, 'topup.db'));
    try {
      // Claimed (one attempt counted), held for the timeout and a margin, nothing recorded as delivered.
      const [e] = eventsOf(db);
      expect(e).toMatchObject({ id: 1, delivery: 'pending', attempts: 1 });
      expect(e!.next_attempt_at).toBeGreaterThan(killedAt);
      r.answer = () => 200;
      startDaemon(env);
      await waitFor('every event delivered after the restart', () => eventsOf(db).length >= 3 && eventsOf(db).every((x) => x.delivery === 'delivered'), 90_000, 200);
      const ids = r.received.map((x) => x.event.id);
      // evt_1 twice (the killed post and its retry), then the others once each, in order.
      expect(ids[0]).toBe('evt_1');
      expect(ids[1]).toBe('evt_1');
      expect(ids.slice(1)).toEqual(eventsOf(db).map((x) => `evt_${x.id}`));
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(25_000);
    } finally {
      db.close();
    }
  }, 150_000);
});
