/**
 * Issue 31: TOPUP_PLAYER_CHECK_SKIP_DAYS spares the order API's orders as it spares a file's rows.
 * A player who got a completed top-up of the same check's line (Mobile Legends: the same zone) in
 * the last N days is not checked again, whether the order follows TOPUP_PLAYER_CHECKS or says
 * `"checkPlayer": true`; another player, another zone, and POST /players/check (which asks for
 * the name itself) are still checked. Real daemon, in-process sandbox, its call log.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../e2e/harness.js';
import { shop, start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

const checkCalls = (sb: RunningSandbox): number => sb.admin.calls().filter((c) => c.route === 'POST /pubgvvfy' || c.route === 'POST /mlvfy').length;

describe('TOPUP_PLAYER_CHECK_SKIP_DAYS and the order API', () => {
  it('an order for a player seen completed in the last N days is not checked; others are', async () => {
    const { sb, env } = await shop({ TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_SKIP_DAYS: '7' }, {}, 'topup-players-skip-');
    const d = await start(env, { started: true });
    const order = (body: Record<string, unknown>) => d.call('POST', '/api/v1/orders', { body });
    const completed = (trxid: string) => waitFor(`${trxid} completed`, async () => ((await d.call('GET', `/api/v1/orders/${trxid}`)).json?.status === 'completed' ? true : undefined), 60_000, 100);

    // Bought without a check (no answer kept), completed: the player is now seen.
    expect((await order({ trxid: 'SKIP-1', pid: 'PUBG-60', userId: '5300000100', checkPlayer: false })).status).toBe(202);
    expect((await order({ trxid: 'SKIP-ML-1', pid: 'ML-86', userId: '777000111', zoneId: '2002', checkPlayer: false })).status).toBe(202);
    await completed('SKIP-1');
    await completed('SKIP-ML-1');
    expect(checkCalls(sb)).toBe(0);

    // The same player, another pack of the line: spared, following the setting or asking.
    const follows = await order({ trxid: 'SKIP-2', pid: 'PUBG-325', userId: '5300000100' });
    expect(follows.status, follows.text).toBe(202);
    expect(follows.json.playerName).toBeNull();
    const asks = await order({ trxid: 'SKIP-3', pid: 'PUBG-60', userId: '5300000100', checkPlayer: true });
    expect(asks.status, asks.text).toBe(202);
    const ml = await order({ trxid: 'SKIP-ML-2', pid: 'ML-86', userId: '777000111', zoneId: '2002' });
    expect(ml.status, ml.text).toBe(202);
    expect(checkCalls(sb)).toBe(0);

    // Another zone is another player; a player never completed is checked; a shop asking for the
    // name gets a check.
    const otherZone = await order({ trxid: 'SKIP-ML-3', pid: 'ML-86', userId: '777000111', zoneId: '2003' });
    expect(otherZone.status, otherZone.text).toBe(202);
    expect(otherZone.json.playerName).toEqual(expect.any(String));
    expect(checkCalls(sb)).toBe(1);
    const fresh = await order({ trxid: 'SKIP-4', pid: 'PUBG-60', userId: '5300000200' });
    expect(fresh.status, fresh.text).toBe(202);
    expect(checkCalls(sb)).toBe(2);
    const named = await d.call('POST', '/api/v1/players/check', { body: { slug: 'pubg', userId: '5300000100' } });
    expect(named.status, named.text).toBe(200);
    expect(checkCalls(sb)).toBe(3);
    await d.daemon.stop();
  }, 180_000);
});
