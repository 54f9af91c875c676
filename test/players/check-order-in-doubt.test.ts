/**
 * Issue 31's adversarial review, attack 6: an order that asks for the check (`checkPlayer: true`)
 * while the check cannot settle. The order is never stored unchecked and never hangs: a check
 * whose answer is held past the request timeout, or cut after the charge, answers the shop 503
 * PLAYER_CHECK_IN_DOUBT with Retry-After within the timeout, and nothing is stored or ordered; a
 * repeat in the window makes no new (maybe charged) call. A check of the same player in flight
 * in another process (`topup validate`) is awaited, not made twice. Real daemon, real CLI,
 * real sandbox.
 */
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli } from '../e2e/harness.js';
import { shop, start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const checkCalls = (calls: { route: string }[]) => calls.filter((c) => c.route === 'POST /pubgvvfy').length;

describe('an order with checkPlayer while its check is in doubt', () => {
  it('a held answer and a cut one: 503 in doubt within the timeout, nothing stored, no second call in the window', async () => {
    const { home, sb, env } = await shop({ TOPUP_REQUEST_TIMEOUT_MS: '2000', TOPUP_PLAYER_CHECK_PRICE_USD: '0.03' }, { players: { checkPriceUsd: 0.03, script: [{ player: '5300000801', holdMs: 8000 }, { player: '5300000802', drop: true }] } }, 'topup-players-order-doubt-');
    const d = await start(env, { started: true });
    for (const [trxid, userId] of [['DOUBT-1', '5300000801'], ['DOUBT-2', '5300000802']] as const) {
      const t0 = Date.now();
      const r = await d.call('POST', '/api/v1/orders', { body: { trxid, pid: 'PUBG-60', userId, checkPlayer: true } });
      expect(Date.now() - t0).toBeLessThan(8000);
      expect(r.status, r.text).toBe(503);
      expect(r.json.code).toBe('PLAYER_CHECK_IN_DOUBT');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await d.call('GET', `/api/v1/orders/${trxid}`)).status).toBe(404);
      // The shop retries at once: answered as before, no new call.
      const calls = checkCalls(sb.admin.calls());
      const again = await d.call('POST', '/api/v1/orders', { body: { trxid, pid: 'PUBG-60', userId, checkPlayer: true } });
      expect(again.json.code).toBe('PLAYER_CHECK_IN_DOUBT');
      expect(checkCalls(sb.admin.calls())).toBe(calls);
    }
    expect(sb.admin.ledger().orders).toHaveLength(0);
    await d.daemon.stop();
    // Both checks are money the reseller sees: in doubt, at the tariff.
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    expect(db.prepare('SELECT outcome, charged, price_usd AS price FROM player_check_calls ORDER BY at').all()).toEqual([
      { outcome: 'in-doubt', charged: 'maybe', price: 0.03 },
      { outcome: 'in-doubt', charged: 'maybe', price: 0.03 },
    ]);
    db.close();
  }, 120_000);

  it('a check of the player in flight in a validate: the order awaits its answer, one call, placed with the name', async () => {
    const { home, sb, env } = await shop({ TOPUP_PLAYER_CHECKS: 'all' }, { players: { script: [{ player: '5300000901', holdMs: 4000 }] } }, 'topup-players-order-flight-');
    const d = await start(env, { started: true });
    const file = join(home.dir, 'one.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5300000901']]));
    const validate = runCli(['validate', '--check-players', '--json', file], env);
    // Once the validate's check has reached the supplier, the shop's order asks for the same player.
    const t0 = Date.now();
    while (checkCalls(sb.admin.calls()) === 0 && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 50));
    const r = await d.call('POST', '/api/v1/orders', { body: { trxid: 'FLIGHT-1', pid: 'PUBG-60', userId: '5300000901', checkPlayer: true } });
    const v = await validate;
    expect(r.status, r.text).toBe(202);
    const name = JSON.parse(v.stdout).playerChecks.rows[0].playerName;
    expect(typeof name).toBe('string');
    expect(r.json.playerName).toBe(name);
    expect(checkCalls(sb.admin.calls())).toBe(1);
    await d.daemon.stop();
  }, 120_000);
});
