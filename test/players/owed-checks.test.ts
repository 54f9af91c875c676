/**
 * Money safety while checks are owed: a batch whose players cannot be checked (the check is
 * refused: here the sandbox's tariff exceeds the balance) is never opened, so nothing of it is
 * sent; once the checks can be answered it runs. Real daemon process, real sandbox.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('owed player checks', () => {
  it('hold the whole batch (no order) until they are answered', async () => {
    const home = tempHome('topup-players-owed-');
    const sb = await inProcessSandbox({ balanceUsd: 5, players: { checkPriceUsd: 50 } });
    const d = startDaemon(cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all' }));
    home.drop('held.csv', csv([['pid', 'userId'], ['PUBG-60', '5300000001'], ['PUBG-60', '5300000002']]));
    await waitFor('a refused check', () => sb.admin.calls().some((c) => c.route === 'POST /pubgvvfy'), 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(sb.admin.ledger().orders).toHaveLength(0);
    // The checks become payable: the batch opens and runs.
    sb.admin.setPlayers({ checkPriceUsd: 0 });
    await waitForResult(home, 'held', 90_000);
    expect(readResult(home, 'held').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
    expect(await d.stop()).toBe(0);
  }, 180_000);
});
