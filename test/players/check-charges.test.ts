/**
 * Issue 31's adversarial review, attack 2: checks the supplier turned away before they ran (a
 * 429, a 401 of the key, a documented maintenance 503) were counted at the tariff in the
 * reseller's money, though the supplier charged nothing for them. Now only what may have been
 * charged is counted: a check that ran (found, not found) and one whose answer does not say (a
 * lost answer, an error page). Real daemon, real sandbox (its tariff charges only the checks it
 * runs), the batch's summary against the supplier's ledger.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, startDaemon, tempHome, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const PRICE = 0.05;

describe('the money of checks the supplier did not run', () => {
  it('a 429, a refused key and maintenance cost nothing; the check that ran costs the tariff', async () => {
    const home = tempHome('topup-players-charges-');
    const sb = await inProcessSandbox({
      balanceUsd: 100,
      players: {
        checkPriceUsd: PRICE,
        script: [
          { status: 429, body: { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' }, headers: { 'retry-after': '1' }, charged: false },
          { status: 401, body: { success: false, error: 'INVALID API KEY' }, charged: false },
          { status: 503, body: { success: false, code: 'MAINTENANCE', error: 'MAINTENANCE' }, charged: false },
        ],
      },
    });
    const d = startDaemon(cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_PRICE_USD: String(PRICE) }));
    home.drop('turned.csv', csv([['pid', 'userId'], ['PUBG-60', '5300000401']]));
    await waitForResult(home, 'turned', 150_000).catch((e) => { console.log(d.output().slice(-6000)); throw e; });
    expect(await d.stop()).toBe(0);
    expect(readResult(home, 'turned').map((r) => r.status)).toEqual(['completed']);

    const charged = sb.admin.ledger().entries.filter((e) => e.kind === 'check');
    expect(charged).toHaveLength(1);
    const s = readSummary(home, 'turned');
    expect(s.playerChecks).toMatchObject({ calls: 4, inDoubt: 0, inDoubtUsd: 0 });
    expect(s.playerChecks.costUsd).toBeCloseTo(PRICE, 6);
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    const calls = db.prepare('SELECT outcome, charged, price_usd AS price FROM player_check_calls ORDER BY at, rowid').all();
    db.close();
    expect(calls).toEqual([
      { outcome: 'rate-limited', charged: 'no', price: 0 },
      { outcome: 'refused', charged: 'no', price: 0 },
      { outcome: 'in-doubt', charged: 'no', price: 0 },
      { outcome: 'found', charged: 'yes', price: PRICE },
    ]);
  }, 240_000);
});
