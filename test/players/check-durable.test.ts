/**
 * Issue 31's adversarial review, attack 1: a check whose answer is lost while the supplier has
 * charged it, beside a SIGKILL of the daemon. A check used to be recorded only when its answer
 * came: the daemon killed while the supplier held the answer left no trace of a charged check,
 * and the reseller's summary counted less than the supplier took. Now the record is written
 * before the request leaves (`sent`, may be charged): after the restart it is "in doubt, may have
 * cost X", in the batch's summary and in what the console counts. Real daemon, real sandbox,
 * real SQLite, a real SIGKILL.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const PRICE = 0.05;

describe('a player check charged whose answer is lost beside a kill', () => {
  it('is in doubt after the restart, counted at the tariff in the summary, never nothing', async () => {
    const home = tempHome('topup-players-durable-');
    // The supplier charges the first check, then holds its answer far longer than the daemon lives.
    const sb = await inProcessSandbox({ balanceUsd: 100, players: { checkPriceUsd: PRICE, script: [{ holdMs: 120_000 }] } });
    const env = cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_PRICE_USD: String(PRICE), TOPUP_REQUEST_TIMEOUT_MS: '3000' });
    const first = startDaemon(env);
    home.drop('kill.csv', csv([['pid', 'userId'], ['PUBG-60', '5300000301']]));
    await waitFor('the supplier charged the check', () => sb.admin.ledger().entries.some((e) => e.kind === 'check'), 60_000);
    await first.kill();

    // After the kill, before any restart: the store says a check was sent and may be charged.
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    expect((db.prepare('SELECT count(*) AS n FROM player_check_calls').get() as { n: number }).n, 'a record of the check sent').toBe(1);
    const sent = db.prepare('SELECT outcome, charged, price_usd AS price, batch_id AS batch FROM player_check_calls').all() as { outcome: string; charged: string; price: number; batch: string | null }[];
    db.close();
    expect(sent).toEqual([{ outcome: 'sent', charged: 'maybe', price: PRICE, batch: expect.any(String) }]);

    // The restart asks again (the killed check can no longer be awaited: its request timed out) and the batch runs.
    const second = startDaemon(env);
    await waitForResult(home, 'kill', 120_000);
    expect(readResult(home, 'kill').map((r) => r.status)).toEqual(['completed']);
    expect(await second.stop()).toBe(0);

    // The supplier charged two checks; the reseller sees both: one of them in doubt.
    const charged = sb.admin.ledger().entries.filter((e) => e.kind === 'check');
    expect(charged).toHaveLength(2);
    const s = readSummary(home, 'kill');
    expect(s.playerChecks).toMatchObject({ calls: 2, inDoubt: 1, notFoundRows: 0 });
    expect(Math.round(s.playerChecks.costUsd * 100)).toBe(Math.round(charged.reduce((n, e) => n - e.amountUsd, 0) * 100));
    expect(Math.round(s.playerChecks.inDoubtUsd * 100)).toBe(5);
    const after = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    const rows = after.prepare('SELECT outcome, charged FROM player_check_calls ORDER BY at').all();
    after.close();
    expect(rows).toEqual([{ outcome: 'in-doubt', charged: 'maybe' }, { outcome: 'found', charged: 'yes' }]);
  }, 240_000);
});
