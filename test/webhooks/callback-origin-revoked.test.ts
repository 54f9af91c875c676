/**
 * Adversarial review 8 (issue 23), security: a per-order callbackUrl is checked against
 * TOPUP_ORDER_WEBHOOK_ALLOW only when the order is accepted. The URL is stored with the row and
 * the deliverer posts every later event of the order there, signed, for 26 h of retries (and with
 * TOPUP_ORDER_WEBHOOK_CODES=1, the codes), whatever TOPUP_ORDER_WEBHOOK_ALLOW says by then. An
 * operator who removes an origin (a shop's host taken over, a partner dropped) and restarts the
 * daemon keeps sending that origin the orders' data. The settings' own comment says the daemon
 * "posts to what a token holder names: not to any host".
 * A correct system checks the stored callbackUrl's origin against the allow list in force when
 * it posts (an origin no longer allowed: the event is not posted there; it falls back to
 * TOPUP_ORDER_WEBHOOK_URL or is marked with a clear last_error, and the feed still lists it).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { receiver } from './helpers.js';
import { SECRET, shop, start } from '../e2e/daemon.js';

releaseAfterEach();

describe('a callbackUrl whose origin the operator no longer allows', () => {
  it('receives no more posts after the origin is removed from TOPUP_ORDER_WEBHOOK_ALLOW and the daemon restarted', async () => {
    // The shop's callback receiver refuses (503) at first, so the order's events stay pending.
    let up = false;
    const hook = await receiver(0, () => (up ? 200 : 503));
    const origin = `http://127.0.0.1:${hook.port}`;
    const { env, home } = await shop({ TOPUP_ORDER_WEBHOOK_SECRET: SECRET, TOPUP_ORDER_WEBHOOK_ALLOW: origin });
    const first = await start(env);
    try {
      const r = await first.call('POST', '/api/v1/orders', { body: { trxid: 'ADV8-CB-1', pid: 'PUBG-60', userId: '5123456701', callbackUrl: hook.url } });
      expect(r.status, r.text).toBe(202);
      await waitFor('a first post to the callback', () => hook.received.length > 0, 30_000, 50);
    } finally {
      await first.daemon.stop();
    }
    // The event the callback refused, and its retry (5 s after the failure) due before the restart:
    // the restarted daemon's first look then meets it (with webhooks off it looks again only after
    // IDLE_LOOK_MS, 60 s, so a retry not yet due at the start would prove nothing in a short wait).
    const events = (): { id: number; delivery: string; attempts: number; nextAttemptAt: number }[] => {
      const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
      try {
        return db.prepare(`SELECT id, delivery, attempts, next_attempt_at AS nextAttemptAt FROM order_events WHERE trxid = 'ADV8-CB-1' ORDER BY id`).all() as { id: number; delivery: string; attempts: number; nextAttemptAt: number }[];
      } finally {
        db.close();
      }
    };
    const delivery = (id: number): string | undefined => events().find((e) => e.id === id)?.delivery;
    const tried = events().find((e) => e.delivery === 'pending' && e.attempts > 0);
    expect(tried, JSON.stringify(events())).toBeDefined();
    await waitFor('the retry due', () => Date.now() > tried!.nextAttemptAt + 100, 30_000, 100);
    // The operator drops the origin (secret kept: no URL, no allowed origin) and restarts.
    const before = hook.received.length;
    up = true;
    const second = await start({ ...env, TOPUP_ORDER_WEBHOOK_ALLOW: '' });
    try {
      // A new order naming that origin is refused now …
      const again = await second.call('POST', '/api/v1/orders', { body: { trxid: 'ADV8-CB-2', pid: 'PUBG-60', userId: '5123456702', callbackUrl: hook.url } });
      expect(again.status).toBe(422);
      expect(again.json.code).toBe('CALLBACK_NOT_ALLOWED');
      // … and the stored order's events no longer go there either (the defect: they did). The
      // deliverer's first look, at its start, meets the due retry: waited for until it is decided.
      await waitFor('the retried event decided', () => delivery(tried!.id) !== 'pending', 30_000, 100).catch((err: Error) => {
        throw new Error(`${err.message}: still ${delivery(tried!.id)}; the daemon said:\n${second.daemon.output().slice(-3000)}`);
      });
      expect(delivery(tried!.id)).toBe('none');
      expect(hook.received.length - before).toBe(0);
    } finally {
      await second.daemon.stop();
      await hook.close();
    }
  }, 90_000);
});
