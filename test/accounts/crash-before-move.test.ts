/**
 * Issue 22 adversarial review: SIGKILL between a first send's refusal that proves nothing was
 * created on this account (the pack was disabled there) and the move UPDATE. dispatch/failover.ts
 * promises: "If the process dies before that UPDATE, the row is where it was (its account, its
 * trxid) and is sent or moved again later". What happens: the next process finds it `sending`,
 * takes it over as `resending` (in doubt), resends the trxid, is refused again, and a refusal of a
 * row in doubt can never move it (no edge from resending/verifying): the history check then proves
 * nothing was created, and the row ends `rejected`, though the other account sells the pack and a
 * row without the crash is bought there. Nothing is bought twice (that holds); the row is lost as
 * a purchase. Real daemon (dist/cli.js), TOPUP_CRASH_AT, two real sandboxes.
 */
import { describe, expect, it } from 'vitest';
import { csv, readResult, startDaemon, waitForResult } from '../e2e/harness.js';
import { ordersOf, trxidsOf, twoAccounts } from './two-sandboxes.js';

describe('SIGKILL between an account refusal and the move', () => {
  it('the row is still moved to the account that sells the pack (as without the crash), bought once', async () => {
    const { home, a, b, env } = await twoAccounts({ env: { TOPUP_CATALOG_MAX_AGE_MS: '600000', TOPUP_REQUEST_TIMEOUT_MS: '1500' } });
    const first = startDaemon({ ...env, TOPUP_CRASH_AT: 'response-received:2' });
    home.drop('warm.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456706']]));
    await waitForResult(home, 'warm');
    expect(readResult(home, 'warm').map((x) => [x.status, x.account])).toEqual([['completed', 'second']]);
    // The daemon's catalog still lists B-PUBG-60 active (cached); the second supplier disables it.
    b.admin.setProduct({ id: 'B-PUBG-60', status: 'inactive' });
    home.drop('later.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456707']]));
    // Its first send is refused (PRODUCT_DISABLED, nothing created) and the daemon dies before the move.
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(ordersOf(b)).toHaveLength(1);

    const second = startDaemon(env);
    try {
      await waitForResult(home, 'later', 90_000);
    } finally {
      await second.stop();
    }
    const [row] = readResult(home, 'later');
    expect([row!.status, row!.account], `${row!.status}: ${row!.error}`).toEqual(['completed', 'main']);
    expect(ordersOf(a)).toHaveLength(1);
    expect(trxidsOf(b)).toHaveLength(1);
  }, 150_000);
});
