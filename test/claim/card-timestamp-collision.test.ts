/**
 * Adversarial review (adv3): a cell of three or more numbers is compared by its numbers SORTED
 * (claim/repeats.ts cellKey), so that a date re-saved in another order still matches. Sorting
 * also makes distinct values equal: 09:14 and 14:09 on one day, 11 Dec and 12 Nov. A key/card
 * file whose rows are told apart by their order time is then read as a repeat of another
 * customer's card: lost sales.
 *
 * Expected: a card ordered at 14:09 is not a repeat of one ordered at 09:14.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv3: two order times with the same numbers in another order', () => {
  it('the 14:09 order is bought after the 09:14 one', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['pid', 'quantity', 'Ordered At'], ['STEAM-5', '1', '2026-11-26 09:14']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    home.drop('afternoon.csv', semi([['pid', 'quantity', 'Ordered At'], ['STEAM-5', '1', '2026-11-26 14:09']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
